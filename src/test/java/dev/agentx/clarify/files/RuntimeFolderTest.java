package dev.agentx.clarify.files;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.support.Jvm;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

class RuntimeFolderTest {
    @TempDir
    Path dir;

    @Test
    void theRuntimeFolderOfALedgerIsItsStateFoldersAndOfAnyOtherFileItsOwnFolders() {
        Path state = dir.resolve(".agentx/state");
        assertEquals(state.resolve(".runtime"), RuntimeFolder.of(state.resolve("clarifications/issue-7.json")));
        assertEquals(state.resolve(".runtime"), RuntimeFolder.of(state.resolve("agent-status.json")));
        assertEquals(state.resolve(".runtime"), RuntimeFolder.in(state));
        assertEquals(dir.resolve(".runtime"), RuntimeFolder.of(dir.resolve("issue-7.json")));
    }

    @Test
    void theLastProcessOutRemovesTheFolderAndAllItHolds() throws Exception {
        Path runtime = RuntimeFolder.in(dir);
        assertEquals(runtime, RuntimeFolder.enter(runtime));
        assertTrue(Files.exists(runtime.resolve("in-use")));
        Files.writeString(runtime.resolve("issue-1.json.queue"), "");
        Files.writeString(runtime.resolve("issue-1.json.tmp-4e0434030ca4f5a5"), "{}");
        Files.createDirectories(runtime.resolve("changes"));
        Files.writeString(runtime.resolve("changes/1-0001767225600000-42-1.out"), "done\n");
        RuntimeFolder.leave(runtime);
        assertFalse(Files.exists(runtime), "nobody else used it");
        RuntimeFolder.leave(runtime); // left already: nothing to do
        assertEquals(List.of(), names(dir));
    }

    /** A status write left for a holder that has not applied it is applied by the next process that takes the lock. */
    @Test
    void statusWritesNoHolderAppliedYetAreKept() throws Exception {
        Path runtime = RuntimeFolder.enter(RuntimeFolder.in(dir));
        Files.createDirectories(runtime.resolve("agent-status.pending"));
        Files.writeString(runtime.resolve("agent-status.pending/7-123-1"), "engineer\n");
        Files.writeString(runtime.resolve("agent-status.json.spare.1"), "{}");
        RuntimeFolder.leave(runtime);
        assertEquals(List.of(".runtime", ".runtime/agent-status.pending", ".runtime/agent-status.pending/7-123-1"),
                names(dir));
    }

    /**
     * A process that leaves while another is in the folder takes nothing away; once the other is
     * gone (here killed, as with kill -9), the next process out is the last and sweeps what both left.
     */
    @Test
    @Timeout(120)
    void aProcessThatIsNotLastLeavesEverythingAndTheNextLastOneSweepsAKilledOnesLeftovers() throws Exception {
        Path runtime = RuntimeFolder.in(dir);
        Process other = Jvm.builder(RuntimeFolderWorker.class, "present", runtime.toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(other.getInputStream(), StandardCharsets.UTF_8));
            assertEquals("held", out.readLine());
            Files.writeString(runtime.resolve("issue-2.json.lock.left-by-the-other"), "{}");
            RuntimeFolder.enter(runtime);
            Files.writeString(runtime.resolve("issue-1.json.queue"), "");
            RuntimeFolder.leave(runtime);
            assertEquals(List.of(".runtime", ".runtime/in-use", ".runtime/issue-1.json.queue",
                    ".runtime/issue-2.json.lock.left-by-the-other"), names(dir), "the other process is still in it");
        } finally {
            other.toHandle().destroyForcibly();
            assertTrue(other.waitFor(30, TimeUnit.SECONDS));
        }
        RuntimeFolder.enter(runtime);
        RuntimeFolder.leave(runtime);
        assertEquals(List.of(), names(dir), "swept by the last one out");
    }

    /**
     * One process clears the folder as the last one out while another is entering it: the one
     * entering opened the old {@code in-use} and waits for its shared lock (seen in /proc/locks)
     * while the first holds it exclusively and removes it and the folder. It finds that the file it
     * locked is gone, makes the folder again and does its work; leaving last, it removes the folder.
     */
    @Test
    @Timeout(120)
    void aProcessEnteringWhileTheLastOneOutClearsTheFolderMakesItAgain() throws Exception {
        Path runtime = RuntimeFolder.in(dir);
        Files.createDirectories(runtime);
        Path inUse = runtime.resolve("in-use");
        Process entering;
        try (FileChannel ch = FileChannel.open(inUse, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE); java.nio.channels.FileLock alone = ch.lock()) {
            entering = Jvm.builder(RuntimeFolderWorker.class, "count", dir.toString(), "1")
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start();
            awaitWaiterOn(inUse, entering.pid(), entering);
            // what the last process out does (RuntimeFolder.leave), holding the exclusive lock
            Files.delete(inUse);
            Files.delete(runtime);
        }
        String out = new String(entering.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertTrue(entering.waitFor(60, TimeUnit.SECONDS), out);
        assertEquals(0, entering.exitValue(), out);
        assertEquals("DONE missing=0 again=1", out, "it found the folder there, then cleared under it, once");
        assertEquals("1", Files.readString(dir.resolve("counter")).strip());
        assertEquals(List.of("counter"), names(dir), "the runtime folder removed by its last process");
    }

    /**
     * Processes that enter the folder, make a file in it and leave it again and again, so that it
     * is removed and made again all the time, beside processes that enter and leave it at every
     * turn of a lock: none of them fails (none finds the folder gone while it is in it), every
     * turn's change is there (the lock excluded throughout), and the folder is gone once they all
     * ended.
     */
    @Test
    @Timeout(300)
    void processesEnteringAndLeavingAllTheTimeLoseNothingAndLeaveNothing() throws Exception {
        int counters = 2;
        int turns = 150;
        List<Process> procs = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            procs.add(Jvm.builder(RuntimeFolderWorker.class, "churn", dir.toString(), "3000")
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start());
        }
        for (int i = 0; i < counters; i++) {
            procs.add(Jvm.builder(RuntimeFolderWorker.class, "count", dir.toString(), String.valueOf(turns))
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start());
        }
        List<String> outs = new ArrayList<>();
        for (Process p : procs) {
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            assertTrue(p.waitFor(240, TimeUnit.SECONDS), out);
            assertEquals(0, p.exitValue(), out);
            assertTrue(out.startsWith("DONE "), out);
            outs.add(out);
        }
        assertEquals(String.valueOf(counters * turns), Files.readString(dir.resolve("counter")).strip(), outs.toString());
        assertEquals(List.of("counter"), names(dir), "nothing left: " + outs);
        System.out.println("runtime folder: 3 processes x 3000 entries, " + counters + " x " + turns + " turns: " + outs);
    }

    /** Waits until /proc/locks shows {@code pid} waiting for a lock on {@code file}. */
    private static void awaitWaiterOn(Path file, long pid, Process p) throws Exception {
        long ino = (Long) Files.getAttribute(file, "unix:ino");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            for (String line : Files.readAllLines(Path.of("/proc/locks"))) {
                String[] f = line.trim().split("\\s+");
                // "7: -> POSIX  ADVISORY  READ 4242 fd:01:1234567 0 EOF"
                if (f.length >= 7 && f[1].equals("->") && f[5].equals(Long.toString(pid))
                        && f[6].endsWith(":" + ino)) {
                    return;
                }
            }
            assertTrue(p.isAlive(), "the entering process ended before it waited");
            assertTrue(System.nanoTime() < deadline, "no wait of " + pid + " on " + file + " in /proc/locks");
            Thread.sleep(10);
        }
    }

    /** Every path under {@code root}, relative, sorted. */
    private static List<String> names(Path root) throws Exception {
        try (Stream<Path> walk = Files.walk(root)) {
            return walk.filter(p -> !p.equals(root)).map(p -> root.relativize(p).toString()).sorted().toList();
        }
    }
}
