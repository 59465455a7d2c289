package dev.agentx.clarify.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.OnlyDocumentedState;
import dev.agentx.clarify.support.TestRoot.Run;
import dev.agentx.clarify.support.TestRoot;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * One damaged ledger, five kinds of damage, every command: what a person sees (exit code, the
 * error's code and what to do), that the other issues are still served, and that nothing is
 * written to a ledger a command could not read.
 */
@ExtendWith(OnlyDocumentedState.class)
class DamagedLedgerTest {
    @TempDir
    Path dir;

    /** The kinds of damage, as the bytes of issue 2's ledger made from its good bytes. */
    private static Map<String, byte[]> damages(byte[] good) {
        String text = new String(good, StandardCharsets.UTF_8);
        Map<String, byte[]> d = new LinkedHashMap<>();
        d.put("torn", text.substring(0, text.length() / 2).getBytes(StandardCharsets.UTF_8));
        d.put("garbage", "\u0000\u0001not json at all {{{".getBytes(StandardCharsets.UTF_8));
        d.put("empty", new byte[0]);
        d.put("wrong issue", text.replace("\"issueNumber\" : 2", "\"issueNumber\" : 3").getBytes(StandardCharsets.UTF_8));
        d.put("newer version", text.replace("\"topic\" : \"Cache\"", "\"topic\" : \"Cache\", \"priority\" : \"high\"")
                .getBytes(StandardCharsets.UTF_8));
        return d;
    }

    @Test
    void oneDamagedLedgerHidesNoOtherAndIsNeverWritten() throws Exception {
        for (Map.Entry<String, byte[]> damage : damages(goodLedgerOfIssue2()).entrySet()) {
            String kind = damage.getKey();
            Path root = dir.resolve(kind.replace(' ', '-'));
            TestRoot t = new TestRoot(root, MutableClock.at("2026-02-26T10:00:00Z"));
            Files.createDirectories(root.resolve(".agentx"));
            assertEquals(0, t.cli("clarify", "ask", "--issue", "1", "--from", "engineer", "--to", "architect", "DB?").code());
            assertEquals(0, t.cli("clarify", "ask", "--issue", "2", "--from", "engineer", "--to", "architect",
                    "--topic", "Cache", "Redis?").code());
            Path ledger2 = root.resolve(".agentx/state/clarifications/issue-2.json");
            Files.write(ledger2, damage.getValue());
            boolean newer = kind.equals("newer version");
            String code = newer ? "LEDGER_NEWER" : "LEDGER_DAMAGED";

            List<String> problems = new ArrayList<>();
            Map<String, byte[]> before = state(root);
            // reads: served for the other issues; the damaged one named with what to do
            Run list = t.cli("clarify");
            expect(problems, kind, "clarify", list, 0, null);
            if (!list.out().contains("CLR-1-001")) {
                problems.add(kind + ": the list hides issue 1");
            }
            if (!newer && !(list.err().contains("LEDGER_DAMAGED") && list.err().contains("issue-2.json")
                    && list.err().contains("agentx sync"))) {
                problems.add(kind + ": the list does not name the damaged ledger and what to do: " + list.err());
            }
            Run json = t.cli("--json", "clarify");
            expect(problems, kind, "--json clarify", json, 0, null);
            if (!newer && !json.out().contains("LEDGER_DAMAGED")) {
                problems.add(kind + ": --json has no warning: " + json.out());
            }
            expect(problems, kind, "clarify --issue 1", t.cli("clarify", "--issue", "1"), 0, null);
            expect(problems, kind, "clarify --issue 2", t.cli("clarify", "--issue", "2"), newer ? 0 : 1,
                    newer ? null : code);
            expect(problems, kind, "show", t.cli("clarify", "show", "CLR-2-001"), newer ? 0 : 1, newer ? null : code);
            for (String[] read : new String[][] {{"state"}, {"ready"}, {"clarify", "stale"}, {"clarify", "digest"}}) {
                expect(problems, kind, String.join(" ", read), t.cli(read), 0, null);
            }
            // writes to the damaged issue: refused with the code, nothing written
            expect(problems, kind, "answer", t.cli("clarify", "answer", "CLR-2-001", "--from", "architect", "Yes"), 1, code);
            expect(problems, kind, "ask", t.cli("clarify", "ask", "--issue", "2", "--from", "engineer", "--to",
                    "architect", "Again?"), 1, code);
            expect(problems, kind, "resolve", t.cli("clarify", "resolve", "CLR-2-001"), 1, code);
            Map<String, byte[]> after = state(root);
            for (String f : before.keySet()) {
                if (!java.util.Arrays.equals(before.get(f), after.get(f))) {
                    problems.add(kind + ": " + f + " changed");
                }
            }
            assertArrayEquals(damage.getValue(), Files.readAllBytes(ledger2), kind + ": the damaged ledger is never written");
            // the other issues are still served for writing
            Run answer = t.cli("clarify", "answer", "CLR-1-001", "--from", "architect", "Postgres.");
            expect(problems, kind, "answer on issue 1", answer, 0, null);
            assertEquals(List.of(), problems);
        }
    }

    private static void expect(List<String> problems, String kind, String what, Run r, int code, String errorCode) {
        if (r.code() != code) {
            problems.add(kind + ": " + what + " exited " + r.code() + ", not " + code + ": " + r.err());
        }
        if (errorCode != null && !r.err().startsWith(errorCode + ": ")) {
            problems.add(kind + ": " + what + " did not say " + errorCode + ": " + r.err());
        }
        if (r.err().contains("INTERNAL") || r.err().contains("Exception") || r.err().contains("\tat ")) {
            problems.add(kind + ": " + what + " leaked an internal error: " + r.err());
        }
    }

    /** The files a command may change: ledgers, statuses, events. */
    private static Map<String, byte[]> state(Path root) throws Exception {
        Map<String, byte[]> out = new LinkedHashMap<>();
        Path state = root.resolve(".agentx/state");
        try (var s = Files.walk(state)) {
            for (Path p : s.filter(Files::isRegularFile).sorted().toList()) {
                String name = state.relativize(p).toString();
                if (name.startsWith("clarifications/issue-") || name.equals("agent-status.json")
                        || name.equals("events.jsonl")) {
                    out.put(name, Files.readAllBytes(p));
                }
            }
        }
        return out;
    }

    private byte[] goodLedgerOfIssue2() throws Exception {
        Path root = dir.resolve("good");
        TestRoot t = new TestRoot(root, MutableClock.at("2026-02-26T10:00:00Z"));
        Files.createDirectories(root.resolve(".agentx"));
        assertEquals(0, t.cli("clarify", "ask", "--issue", "2", "--from", "engineer", "--to", "architect", "--topic",
                "Cache", "Redis?").code());
        byte[] bytes = Files.readAllBytes(root.resolve(".agentx/state/clarifications/issue-2.json"));
        assertFalse(bytes.length == 0);
        assertTrue(new String(bytes, StandardCharsets.UTF_8).contains("\"topic\" : \"Cache\""));
        return bytes;
    }
}
