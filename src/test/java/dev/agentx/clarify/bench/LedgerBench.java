package dev.agentx.clarify.bench;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.channel.HumanChannel;
import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.lock.LockObserver;
import dev.agentx.clarify.lock.LockSettings;
import dev.agentx.clarify.lock.ProcessIdentity;
import dev.agentx.clarify.lock.Sleeper;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.routing.Outcome;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Ledger benchmarks (not a test; run by bench/run):
 * <ul>
 *   <li>{@code uncontended DIR N}: request+answer through the engine vs the same two ledger writes done
 *   bare (write, fsync, rename, fsync dir: the physical floor), in one process.</li>
 *   <li>{@code contended DIR P K}: P processes each doing K request+answer pairs on one issue: ops/s and
 *   the distribution of lock waits.</li>
 * </ul>
 * Prints Markdown table rows.
 */
public final class LedgerBench {
    private LedgerBench() {
    }

    public static void main(String[] args) throws Exception {
        switch (args[0]) {
            case "uncontended" -> uncontended(Path.of(args[1]), Integer.parseInt(args[2]));
            case "contended" -> contended(Path.of(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]), false);
            case "spread" -> contended(Path.of(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]), true);
            case "worker" -> worker(Path.of(args[1]), args[2], Integer.parseInt(args[3]), Integer.parseInt(args[4]));
            case "populate" -> populate(Path.of(args[1]), Integer.parseInt(args[2]));
            default -> throw new IllegalArgumentException(args[0]);
        }
    }

    /**
     * One request+answer at a time, with the statuses written inline (as a CLI command writes them
     * before it exits) and written behind (as {@code agentx mcp} runs: the writer thread's work is
     * finished, untimed, before the next figure is taken), each against the floor of its two
     * durable ledger writes.
     */
    private static void uncontended(Path dir, int n) throws Exception {
        LocalMode inline = LocalMode.open(dir.resolve("inline"), Clock.systemUTC());
        LocalMode behind = LocalMode.open(dir.resolve("behind"), Clock.systemUTC());
        behind.statuses().writeBehind();
        Path floorDir = dir.resolve("floor");
        Files.createDirectories(floorDir);
        // warm-up: the JIT compiles the engine's paths, as in a long-lived process (the server, an agent's JVM)
        for (int i = 0; i < 500; i++) {
            pair(inline, 100_000 + i, "warm");
            pair(behind, 100_000 + i, "warm");
            behind.statuses().flush();
        }
        List<Long> inlineTimes = new ArrayList<>();
        List<Long> behindTimes = new ArrayList<>();
        List<Long> floor = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int issue = i + 1;
            long t0 = System.nanoTime();
            pair(inline, issue, "q" + i);
            inlineTimes.add(System.nanoTime() - t0);
            t0 = System.nanoTime();
            pair(behind, issue, "q" + i);
            behindTimes.add(System.nanoTime() - t0);
            behind.statuses().flush();
            // the floor: the same two ledger states written bare
            byte[] asked = Files.readAllBytes(inline.files().ledgers().fileOf(issue));
            Path target = floorDir.resolve("issue-" + issue + ".json");
            long t1 = System.nanoTime();
            AtomicFiles.write(target, asked);
            AtomicFiles.write(target, asked);
            floor.add(System.nanoTime() - t1);
        }
        Stats e = Stats.ofNanos(inlineTimes);
        Stats b = Stats.ofNanos(behindTimes);
        Stats f = Stats.ofNanos(floor);
        System.out.println("| request+answer, statuses inline (a CLI command) | " + e.row() + " |");
        System.out.println("| request+answer, statuses written behind (agentx mcp) | " + b.row() + " |");
        System.out.println("| floor: 2 x write+fsync+rename+dir fsync of the same bytes | " + f.row() + " |");
        System.out.printf("| ratio inline/floor (p50) | %.1fx | | | |%n", e.p50() / f.p50());
        System.out.printf("| ratio behind/floor (p50) | %.1fx | | | |%n", b.p50() / f.p50());
        String where = onJournaledExt4(dir);
        Summary.row("request+answer p50, statuses inline (LedgerBench, the CLI's path)" + where, Summary.ms(e.p50()),
                Summary.ms(f.p50()), "<=2x");
        Summary.row("request+answer p50, statuses written behind (the MCP path)" + where, Summary.ms(b.p50()),
                Summary.ms(f.p50()), "<=2x");
    }

    /** The summary rows of a run in bench/run's loop-mounted journaled ext4 are told apart by this. */
    private static String onJournaledExt4(Path dir) {
        return dir.toString().contains("ext4-journaled") ? " (journaled ext4)" : "";
    }

    /** A root with N issues, each with one answered and one pending clarification (for the CLI benchmark). */
    private static void populate(Path root, int issues) {
        LocalMode local = LocalMode.open(root, Clock.systemUTC());
        for (int i = 1; i <= issues; i++) {
            pair(local, i, "question " + i);
            local.engine().execute(new ClarifyCommand.Ask(i, "engineer", "product-manager", null, "pending " + i, true,
                    List.of(), null));
        }
    }

    private static Outcome pair(LocalMode local, int issue, String q) {
        Outcome o = local.engine().execute(new ClarifyCommand.Ask(issue, "engineer", "architect", null, q, true,
                List.of(), null));
        return local.engine().execute(new ClarifyCommand.Answer(o.record().id(), null, "a"));
    }

    /** Request+answer pairs each contending process makes on its own issue before the measured span. */
    static final int WARM_UP_PAIRS = 100;

    /** The issue the workers share for the second half of their warm-up. */
    static final int WARM_UP_ISSUE = 999_999;

    /**
     * {@code processes} workers each making {@code pairs} request+answer pairs: all on issue 1, or
     * with {@code spread} each on an issue of its own (what then still serialises them is shared:
     * {@code agent-status.json} and the cores).
     */
    private static void contended(Path dir, int processes, int pairs, boolean spread) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Process> procs = new ArrayList<>();
        long start = System.nanoTime();
        for (int i = 0; i < processes; i++) {
            // the JVM flags bin/agentx starts every command but serve with, agentx mcp included: C1 only.
            // With both compilers, C2 compiles the engine's paths for the first thousands of operations
            // and takes a third to a half of the 2 cores in the measured span
            procs.add(new ProcessBuilder(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp",
                    System.getProperty("java.class.path"),
                    LedgerBench.class.getName(), "worker", dir.toString(), "p" + i, String.valueOf(pairs),
                    String.valueOf(spread ? i + 1 : 1))
                    .redirectError(ProcessBuilder.Redirect.INHERIT).start());
        }
        // every worker warms up (JVM start, class loading, first compilations) before any measures:
        // the span measures the contention, not 16 JVMs starting on 2 cores
        List<BufferedReader> outs = new ArrayList<>();
        for (Process p : procs) {
            BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            String ready = r.readLine();
            while (ready != null && ready.startsWith("[")) {
                // a warning of the JVM's own (unified logging writes to stdout), such as a perf data
                // file of a reused pid still locked: not the worker's word
                System.err.println("worker: " + ready);
                ready = r.readLine();
            }
            if (!"READY".equals(ready)) {
                procs.forEach(Process::destroyForcibly);
                throw new IllegalStateException("a contending worker did not start: " + ready);
            }
            outs.add(r);
        }
        for (Process p : procs) {
            p.getOutputStream().write("GO\n".getBytes(StandardCharsets.UTF_8));
            p.getOutputStream().flush();
        }
        List<Long> waits = new ArrayList<>();
        long firstStart = Long.MAX_VALUE;
        long lastEnd = 0;
        int timeouts = 0;
        for (int i = 0; i < procs.size(); i++) {
            Process p = procs.get(i);
            try (BufferedReader r = outs.get(i)) {
                String line;
                while ((line = r.readLine()) != null) {
                    String[] f = line.split(" ");
                    switch (f[0]) {
                        case "WAIT" -> waits.add(Long.parseLong(f[1]));
                        case "SPAN" -> {
                            firstStart = Math.min(firstStart, Long.parseLong(f[1]));
                            lastEnd = Math.max(lastEnd, Long.parseLong(f[2]));
                        }
                        case "TIMEOUTS" -> timeouts += Integer.parseInt(f[1]);
                        default -> { }
                    }
                }
            }
            if (!p.waitFor(600, TimeUnit.SECONDS) || p.exitValue() != 0) {
                procs.forEach(Process::destroyForcibly);
                throw new IllegalStateException("a contending worker failed; see its error above");
            }
        }
        double seconds = (lastEnd - firstStart) / 1e9;
        int ops = processes * pairs * 2;
        Stats w = Stats.ofNanos(waits);
        System.out.printf("| %d | %d | %.0f | %s | %d |%n", processes, ops, ops / seconds, w.row(), timeouts);
        if (processes == 16 && !spread) {
            String where = onJournaledExt4(dir);
            Summary.row("16 processes on one issue: throughput" + where, String.format("%.0f ops/s", ops / seconds), "-",
                    ">=300 ops/s");
            Summary.row("16 processes on one issue: lock wait p99" + where, Summary.ms(w.p99()), "-", "<150 ms");
            Summary.row("16 processes on one issue: LOCK_TIMEOUT retries" + where, Integer.toString(timeouts), "-", "=0");
        }
    }

    /** One contending process: prints each lock wait, its active span and its LOCK_TIMEOUT retries. */
    private static void worker(Path dir, String name, int pairs, int issue) {
        List<Long> waits = new ArrayList<>();
        LockObserver observer = (file, waited) -> {
            if (file.getFileName().toString().startsWith("issue-")) {
                synchronized (waits) {
                    waits.add(waited.toNanos());
                }
            }
        };
        Clock clock = Clock.systemUTC();
        LockManager locks = new LockManager(clock, LockSettings.defaults(), Sleeper.real(), ProcessIdentity.current(),
                observer);
        LocalMode local = new LocalMode(dir, clock, locks, new HumanChannel());
        local.statuses().writeBehind(); // a long-lived agent process: agentx mcp
        int[] timeouts = {0};
        // warm up (class loading, the compiler), as a long-lived agent process is: the measured span is
        // the contention on the shared issue, not 16 JVMs compiling. Half on an issue of its own, half
        // on one all workers share, so that the paths taken under contention are compiled too (one
        // process carrying out the changes of others: see FileLedgerStore#submit)
        int own = 1000 + Math.abs(name.hashCode() % 100_000);
        for (int i = 0; i < WARM_UP_PAIRS; i++) {
            int warmIssue = i < WARM_UP_PAIRS / 2 ? own : WARM_UP_ISSUE;
            Outcome warm = retry(timeouts, () -> local.engine().execute(new ClarifyCommand.Ask(warmIssue, "engineer",
                    "architect", null, "warm-" + name, true, List.of(), null)));
            retry(timeouts, () -> local.engine().execute(new ClarifyCommand.Answer(warm.record().id(), null, "a")));
        }
        synchronized (waits) {
            waits.clear();
        }
        timeouts[0] = 0;
        System.out.println("READY");
        System.out.flush();
        try {
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine(); // GO
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        long t0 = System.nanoTime();
        for (int i = 0; i < pairs; i++) {
            String q = name + "-" + i;
            Outcome o = retry(timeouts, () -> local.engine().execute(new ClarifyCommand.Ask(issue, "engineer",
                    "architect", null, q, true, List.of(), null)));
            retry(timeouts, () -> local.engine().execute(new ClarifyCommand.Answer(o.record().id(), null, "a")));
        }
        long t1 = System.nanoTime();
        StringBuilder b = new StringBuilder();
        for (long w : waits) {
            b.append("WAIT ").append(w).append('\n');
        }
        b.append("SPAN ").append(t0).append(' ').append(t1).append('\n');
        b.append("TIMEOUTS ").append(timeouts[0]).append('\n');
        System.out.print(b);
        System.out.flush();
    }

    private static <T> T retry(int[] timeouts, Supplier<T> op) {
        while (true) {
            try {
                return op.get();
            } catch (ClarifyException e) {
                if (e.code() != ErrorCode.LOCK_TIMEOUT) {
                    throw e;
                }
                timeouts[0]++;
            }
        }
    }

}
