package dev.agentx.clarify.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.charset.CharacterCodingException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The repository is all a user's clone has: nothing refers to a folder beside it, the README is a
 * short entry point whose links resolve, the reference pages exist, and docs and code comments
 * describe the code as it is (no dates, "since ..." or earlier versions).
 */
class RepositoryStandsAloneTest {
    private static final Path ROOT = Path.of("").toAbsolutePath();
    private static final List<String> DOC_PAGES = List.of("cli.md", "configuration.md", "protocol.md",
            "github-app.md", "operations.md", "answer-channels.md", "monitor.md", "architecture.md", "mcp.md", "dashboard.md",
            "storage.md");
    private static final Pattern HISTORY = Pattern.compile(
            "(^|[^-])since 20[0-9]{2}|before [0-9a-f]{7}\\b|earlier version");
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)#\\s]+)(#[^)]*)?\\)");

    /** Every file of the repository but the build's output and git's own. */
    private static List<Path> repositoryFiles() throws IOException {
        try (Stream<Path> s = Files.walk(ROOT)) {
            return s.filter(Files::isRegularFile)
                    .filter(p -> {
                        Path rel = ROOT.relativize(p);
                        String first = rel.getName(0).toString();
                        return !first.equals("target") && !first.equals(".git") && !first.equals(".idea")
                                && !first.equals("agentx-data") && !rel.toString().equals(".jqwik-database");
                    })
                    .toList();
        }
    }

    private static String text(Path p) throws IOException {
        try {
            return StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(Files.readAllBytes(p)))
                    .toString();
        } catch (CharacterCodingException e) {
            return ""; // a binary file
        }
    }

    @Test
    void noFileRefersToAFolderBesideTheRepository() throws IOException {
        List<String> found = new ArrayList<>();
        String beside = ".." + "/shared"; // split so that this file does not match itself
        for (Path p : repositoryFiles()) {
            if (text(p).contains(beside)) {
                found.add(ROOT.relativize(p).toString());
            }
        }
        assertEquals(List.of(), found, "files that refer to " + beside);
    }

    @Test
    void theReadmeIsShortAndItsLinksResolve() throws IOException {
        List<String> lines = Files.readAllLines(ROOT.resolve("README.md"));
        assertTrue(lines.size() < 200, "README.md has " + lines.size() + " lines; reference belongs in docs/");
        assertBrokenLinks(ROOT.resolve("README.md"));
    }

    @Test
    void everyReferencePageExistsAndItsLinksResolve() throws IOException {
        for (String page : DOC_PAGES) {
            Path p = ROOT.resolve("docs").resolve(page);
            assertTrue(Files.isRegularFile(p), "docs/" + page + " is missing");
            assertBrokenLinks(p);
        }
        assertBrokenLinks(ROOT.resolve("bench/README.md"));
    }

    @Test
    void docsAndCommentsDescribeTheCodeAsItIs() throws IOException {
        List<String> found = new ArrayList<>();
        for (Path p : repositoryFiles()) {
            String rel = ROOT.relativize(p).toString().replace('\\', '/');
            boolean checked = rel.equals("README.md") || rel.startsWith("docs/") || rel.startsWith("src/main/");
            if (!checked) {
                continue;
            }
            List<String> lines = text(p).lines().toList();
            for (int i = 0; i < lines.size(); i++) {
                if (HISTORY.matcher(lines.get(i)).find()) {
                    found.add(rel + ":" + (i + 1) + ": " + lines.get(i).strip());
                }
            }
        }
        assertEquals(List.of(), found, "history in prose: git log holds it");
    }

    private static void assertBrokenLinks(Path page) throws IOException {
        List<String> broken = new ArrayList<>();
        Matcher m = LINK.matcher(Files.readString(page));
        while (m.find()) {
            String target = m.group(1);
            if (target.contains("://") || target.startsWith("mailto:")) {
                continue;
            }
            if (!Files.exists(page.getParent().resolve(target).normalize())) {
                broken.add(target);
            }
        }
        assertEquals(List.of(), broken, "links of " + ROOT.relativize(page) + " that lead nowhere");
    }
}
