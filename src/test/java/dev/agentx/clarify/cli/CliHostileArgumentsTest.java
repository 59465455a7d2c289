package dev.agentx.clarify.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.OnlyDocumentedState;
import dev.agentx.clarify.support.TempDirs;
import dev.agentx.clarify.support.TestRoot;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Generated command lines, of real words and hostile values (control characters, huge and
 * negative numbers, empty strings, ids with stray space): the CLI answers each with a usage or
 * protocol error or does the work, never an internal error or a stack trace, and a refused command
 * writes nothing. ({@code --root} is left out: a generated one could name a real folder outside the
 * test's, which {@code init} would then write to.)
 */
class CliHostileArgumentsTest {
    private static Path dir;
    private static TestRoot root;

    @BeforeContainer
    static void project() throws IOException {
        dir = TempDirs.create("agentx-cli-hostile");
        root = new TestRoot(dir, MutableClock.at("2026-02-26T10:00:00Z"));
        Files.createDirectories(dir.resolve(".agentx"));
        root.cli("clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect", "Which DB?");
    }

    @AfterContainer
    static void remove() throws IOException {
        try {
            OnlyDocumentedState.assertOnlyDocumentedUnder(dir);
        } finally {
            TempDirs.delete(dir);
        }
    }

    @Provide
    Arbitrary<List<String>> commandLines() {
        Arbitrary<String> words = Arbitraries.of("clarify", "list", "show", "ask", "answer", "followup", "resolve",
                "escalate", "abandon", "accept", "ingest", "stale", "digest", "hook", "start", "finish", "state",
                "ready", "monitor", "sync", "init", "completion", "bash", "--json", "--issue", "--from", "--to",
                "--topic", "--option", "--choice", "--since", "--agent", "--by", "-m", "--all", "--force",
                "--non-blocking", "--workflow", "--repo", "--help", "--version", "engineer", "architect", "pm",
                "CLR-1-001", "CLR-1-001\n", " CLR-1-001", "CLR-0-001", "CLR-99999999999-001", "1", "0", "-1",
                "4294967303", "9223372036854775808", "7x", "2026-13-45", "", " ", "\u001b[31m", "\u0000", "@nofile",
                "--", "x".repeat(3_000), "/does/not/exist");
        Arbitrary<String> noise = Arbitraries.strings().ofMaxLength(12);
        return Arbitraries.oneOf(words, words, words, noise).list().ofMaxSize(8);
    }

    @Property(tries = 400)
    void everyCommandLineEndsWithoutAnInternalErrorAndARefusalWritesNothing(@ForAll("commandLines") List<String> args) {
        Map<String, String> before = root.snapshot();
        TestRoot.Run r = root.cli(args.toArray(String[]::new));
        String line = String.join(" ", args.stream().map(a -> "[" + a + "]").toList());
        assertNotEquals(1, r.code(), line + "\n" + r.err());
        assertFalse(r.err().contains("Exception") || r.err().contains("\tat "), line + "\n" + r.err());
        if (r.code() != 0) {
            assertEquals(before, root.snapshot(), "a refused command wrote something: " + line + "\n" + r.err());
        }
    }
}
