package dev.agentx.clarify.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.agentx.clarify.files.JsonErrors;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.monitor.ReadyQueue;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads {@code .agentx/issues/}: one file per issue, {@code N.json}, in the format of AgentX's
 * local issue manager: {@code {"number": N, "title": "...", "state": "open"|"closed",
 * "status": "Backlog", "labels": [...]}}; every field is optional and other fields (body,
 * comments, dates) are ignored. A file that cannot be used is reported as a warning naming it and
 * the reason, and the others are still read.
 */
final class LocalIssues {
    private static final Pattern NAME = Pattern.compile("(\\d{1,9})\\.json");


    /** The issues read and one warning per unusable file. */
    record Listing(List<ReadyQueue.Issue> issues, List<String> warnings) {
    }

    Listing read(Path dir) {
        List<ReadyQueue.Issue> issues = new ArrayList<>();
        List<String> warnings = new ArrayList<>();
        List<Path> files = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "*.json")) {
            ds.forEach(files::add);
        } catch (NoSuchFileException | NotDirectoryException e) {
            return new Listing(List.of(), List.of());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + dir + ": " + e.getMessage(), e);
        }
        files.sort(null);
        for (Path file : files) {
            Matcher m = NAME.matcher(file.getFileName().toString());
            int n = m.matches() ? Integer.parseInt(m.group(1)) : 0;
            if (n < 1) {
                warnings.add(file + " ignored: an issue file is named after its number, like 42.json.");
                continue;
            }
            try {
                issues.add(parse(file, n));
            } catch (IllegalArgumentException e) {
                warnings.add(file + " ignored: " + e.getMessage());
            }
        }
        return new Listing(issues, warnings);
    }

    private ReadyQueue.Issue parse(Path file, int n) {
        JsonNode root;
        try {
            root = JsonSupport.shared().readTree(Files.readAllBytes(file));
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not valid JSON: " + JsonErrors.describe(e), e);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read it: " + e.getMessage(), e);
        }
        if (root == null || !root.isObject()) {
            throw new IllegalArgumentException("it must hold a JSON object like {\"number\": " + n
                    + ", \"title\": \"...\", \"state\": \"open\"}");
        }
        JsonNode number = root.get("number");
        if (number != null && !(number.canConvertToInt() && number.isIntegralNumber() && number.asInt() == n)) {
            throw new IllegalArgumentException("its number is " + number + " but the file name says " + n);
        }
        String state = text(root, "state");
        if (state != null && !state.equalsIgnoreCase("open") && !state.equalsIgnoreCase("closed")) {
            throw new IllegalArgumentException("field 'state' must be \"open\" or \"closed\", got \"" + state + "\"");
        }
        List<String> labels = new ArrayList<>();
        JsonNode l = root.get("labels");
        if (l != null && !l.isNull()) {
            if (!l.isArray()) {
                throw new IllegalArgumentException("field 'labels' must be an array of strings");
            }
            for (JsonNode label : l) {
                if (!label.isTextual()) {
                    throw new IllegalArgumentException("field 'labels' must be an array of strings");
                }
                labels.add(label.asText());
            }
        }
        return new ReadyQueue.Issue(n, text(root, "title"), state, text(root, "status"), labels);
    }

    private static String text(JsonNode root, String field) {
        JsonNode v = root.get(field);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isTextual()) {
            throw new IllegalArgumentException("field '" + field + "' must be a string, got " + v.getNodeType()
                    .name().toLowerCase(java.util.Locale.ROOT));
        }
        return v.asText();
    }
}
