package dev.agentx.clarify.github.contract;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.github.support.GitHubContract;
import dev.agentx.clarify.github.support.RequestJournal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every request the App made of WireMock standing in for GitHub, in every test of this build
 * ({@link RequestJournal}'s files, which the build empties before the tests), held against GitHub's
 * REST description ({@link GitHubContract}): its method and path exist, its parameters and body
 * are valid. Runs after the unit tests, so it sees the requests of all of them; it fails listing
 * each kind of violation with one request that shows it and how many requests did.
 */
class GitHubContractIT {
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void everyRequestTheAppMadeIsOneGitHubDocuments() throws Exception {
        Set<Recorded> requests = new LinkedHashSet<>();
        List<Path> files = new ArrayList<>();
        if (Files.isDirectory(RequestJournal.FOLDER)) {
            try (Stream<Path> list = Files.list(RequestJournal.FOLDER)) {
                files = list.filter(p -> p.toString().endsWith(".jsonl")).sorted().toList();
            }
        }
        for (Path file : files) {
            for (String line : Files.readAllLines(file)) {
                if (!line.isBlank()) {
                    JsonNode n = JSON.readTree(line);
                    requests.add(new Recorded(n.path("method").asText(), n.path("url").asText(),
                            n.path("body").isNull() ? null : n.path("body").asText()));
                }
            }
        }
        if (requests.isEmpty()) {
            fail("no requests of the App recorded in " + RequestJournal.FOLDER
                    + ": this check runs in the build after the tests that make them (mvn verify)");
        }
        GitHubContract contract = new GitHubContract();
        // one line per kind of violation (method, path with its numbers as {n}, what is wrong)
        Map<String, Violation> violations = new TreeMap<>();
        for (Recorded r : requests) {
            String wrong = contract.check(r.method(), r.url(), r.body());
            if (!wrong.isEmpty()) {
                String path = r.url().replaceFirst("\\?.*", "").replaceAll("/\\d+(?=/|$)", "/{n}");
                violations.computeIfAbsent(r.method() + " " + path + ": " + wrong, k -> new Violation(r)).count++;
            }
        }
        StringBuilder report = new StringBuilder();
        violations.forEach((what, v) -> report.append("\n  ").append(what).append("\n    e.g. ")
                .append(v.example.method()).append(' ').append(v.example.url())
                .append(v.example.body() == null || v.example.body().isEmpty() ? "" : " " + v.example.body())
                .append(" (").append(v.count).append(" distinct requests)"));
        assertTrue(violations.isEmpty(), violations.size() + " kinds of request GitHub does not document, of "
                + requests.size() + " distinct requests in " + files.size() + " files:" + report);
    }

    private record Recorded(String method, String url, String body) {}

    private static final class Violation {
        final Recorded example;
        int count;

        Violation(Recorded example) {
            this.example = example;
        }
    }
}
