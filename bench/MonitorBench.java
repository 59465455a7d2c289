// Benchmark (not a test) of one monitor pass over 10, 100, 1,000, 10,000 and 100,000 ledgers, 5 % active.
// Run it with bench/monitor-bench.sh, which builds target/agentx.jar and launches this file:
//   java -cp target/agentx.jar bench/MonitorBench.java [sizes...]
//   java -cp target/agentx.jar bench/MonitorBench.java --generate DIR N   (only writes the ledgers)
// Each size gets a fresh project under a temp dir. The ledgers are written directly (no fsync), as
// the store writes them, with the marks of the active ones in state/monitor-active/: closed ones
// hold a resolved two-round record, active ones a resolved record plus a pending one that is not
// yet due, so a pass has nothing to act on (every repetition measures the same work). A pass is
// timed as a CLI process runs it (and the server's pass after an event: the same objects): a new
// index object, ClarificationMonitor.run(). The first pass (no index yet: every ledger is read
// and the index is built) is reported on its own; then warm-up passes, then the measured ones
// (median and p90 of the wall-clock time, and the median CPU time of the pass, which other work on
// a shared machine does not inflate): these read the marked ledgers only. Last, the full check a
// pass makes when the last one is a minute old (every ledger file listed and stat'ed, the index
// parsed and written): 5 passes, each with the clock a minute later.
// With 100,000 ledgers it also prints the line SUMMARY|monitor pass, ...|median|-|goal.

import dev.agentx.clarify.channel.HumanChannel;
import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.ledger.ActiveLedgerIndex;
import dev.agentx.clarify.ledger.LedgerCodec;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.monitor.ClarificationMonitor;
import dev.agentx.clarify.monitor.MonitorReport;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

public final class MonitorBench {
    private static final Instant NOW = Instant.parse("2026-02-26T12:00:00Z");
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
    private static final String[] AGENTS = {"engineer", "architect", "reviewer", "product-manager"};

    public static void main(String[] args) throws Exception {
        if (args.length == 3 && args[0].equals("--generate")) { // --generate DIR N: only write the ledgers
            int n = Integer.parseInt(args[2]);
            // against the real clock, for timing the CLI: the open questions are due in 20 minutes
            generate(Path.of(args[1]), n, Math.max(1, Math.round(n * 0.05f)),
                    Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS));
            return;
        }
        int[] sizes = args.length == 0 ? new int[] {10, 100, 1_000, 10_000, 100_000}
                : Arrays.stream(args).mapToInt(Integer::parseInt).toArray();
        System.out.println("| ledgers | active | first pass (builds the index) | median pass | p90 pass | median CPU | passes measured | full check (at most once a minute), median of 5 |");
        System.out.println("|--------:|-------:|------------------------------:|------------:|---------:|-----------:|----------------:|------------------:|");
        List<String> summary = new ArrayList<>();
        for (int n : sizes) {
            Path root = Files.createTempDirectory("agentx-bench-" + n + "-");
            try {
                long median = run(root, n);
                if (n == 100_000) {
                    summary.add(String.format(Locale.ROOT, "SUMMARY|monitor pass, 100,000 ledgers, 5%% active (median)|%.0f ms|-|<200 ms",
                            median / 1e6));
                }
            } finally {
                if (!"1".equals(System.getenv("KEEP"))) {
                    delete(root);
                } else {
                    System.err.println("kept " + root);
                }
            }
        }
        summary.forEach(System.out::println);
    }

    /** Prints the size's row; returns the median pass in nanoseconds. */
    private static long run(Path root, int n) throws IOException {
        int active = Math.max(1, Math.round(n * 0.05f));
        generate(root, n, active, NOW);
        Clock clock = Clock.fixed(NOW, ZoneOffset.UTC);
        LocalMode local = new LocalMode(root, clock, LockManager.standard(clock), new HumanChannel());
        Path index = root.resolve(".agentx/state/monitor-index.json");

        long first = pass(local, clock, index, active)[0];
        int warmup = n >= 100_000 ? 10 : n >= 10_000 ? 15 : 30;
        int measured = n >= 100_000 ? 30 : n >= 10_000 ? 40 : 50;
        for (int i = 0; i < warmup; i++) {
            pass(local, clock, index, active);
        }
        long[] wall = new long[measured];
        long[] cpu = new long[measured];
        for (int i = 0; i < measured; i++) {
            long[] t = pass(local, clock, index, active);
            wall[i] = t[0];
            cpu[i] = t[1];
        }
        Arrays.sort(wall);
        Arrays.sort(cpu);
        long[] full = new long[5];
        for (int i = 0; i < full.length; i++) { // each a minute after the last: a full check is due
            Clock later = Clock.fixed(NOW.plus(Duration.ofMinutes(i + 1)), ZoneOffset.UTC);
            full[i] = pass(new LocalMode(root, later, LockManager.standard(later), new HumanChannel()), later, index, active)[0];
        }
        Arrays.sort(full);
        System.out.printf(Locale.ROOT, "| %,d | %,d | %s | %s | %s | %s | %d | %s |%n", n, active, ms(first),
                ms(wall[measured / 2]), ms(wall[(int) Math.ceil(measured * 0.9) - 1]), ms(cpu[measured / 2]), measured,
                ms(full[full.length / 2]));
        return wall[measured / 2];
    }

    /**
     * One pass with a fresh index object, as a new CLI process makes it; returns its wall-clock and
     * CPU nanoseconds (the CPU time of this thread, which other processes on the machine do not inflate).
     */
    private static long[] pass(LocalMode local, Clock clock, Path index, int active) {
        long cpuStart = THREADS.getCurrentThreadCpuTime();
        long start = System.nanoTime();
        ClarificationMonitor monitor = new ClarificationMonitor(clock, new ActiveLedgerIndex(local.files().ledgers(), index),
                local.engine(), new HumanChannel(), local::upstreamOrder);
        MonitorReport r = monitor.run();
        long took = System.nanoTime() - start;
        long cpu = THREADS.getCurrentThreadCpuTime() - cpuStart;
        if (r.active() != active || !r.actions().isEmpty() || !r.warnings().isEmpty()) {
            throw new IllegalStateException("unexpected pass: " + r);
        }
        return new long[] {took, cpu};
    }

    private static void generate(Path root, int n, int active, Instant now) throws IOException {
        Path dir = root.resolve(".agentx/state/clarifications");
        Path marks = root.resolve(".agentx/state/monitor-active");
        Files.createDirectories(dir);
        Files.createDirectories(marks);
        LedgerCodec codec = new LedgerCodec();
        // spread the active ledgers evenly over the issue numbers
        for (int issue = 1; issue <= n; issue++) {
            boolean isActive = (long) (issue - 1) * active / n != (long) issue * active / n;
            String from = AGENTS[issue % AGENTS.length];
            String to = AGENTS[(issue + 1) % AGENTS.length];
            List<ClarificationRecord> records = new ArrayList<>();
            records.add(resolved(issue, 1, from, to, now));
            if (isActive) {
                Instant asked = now.minus(Duration.ofMinutes(10));
                records.add(new ClarificationRecord(String.format("CLR-%d-002", issue), from, to, "Open topic " + issue,
                        true, Status.PENDING, 1, 5, asked, asked.plus(Duration.ofMinutes(30)), null, List.of(),
                        List.of(new ThreadEntry(1, from, EntryType.QUESTION, "Still open question number " + issue + "?",
                                asked))));
            }
            if (isActive) { // as the store's writes keep it: the mark before the ledger
                Files.write(marks.resolve(Integer.toString(issue)), new byte[0]);
            }
            Files.write(dir.resolve("issue-" + issue + ".json"), codec.encode(new Ledger(issue, records)));
        }
    }

    private static ClarificationRecord resolved(int issue, int seq, String from, String to, Instant now) {
        Instant t = now.minus(Duration.ofDays(3));
        List<ThreadEntry> thread = List.of(
                new ThreadEntry(1, from, EntryType.QUESTION, "Which approach should we take for part " + issue + "?", t),
                new ThreadEntry(1, to, EntryType.ANSWER, "Take the simple one; see the ADR for issue " + issue + ".",
                        t.plusSeconds(300)),
                new ThreadEntry(2, from, EntryType.QUESTION, "And what about the error handling of it?", t.plusSeconds(400)),
                new ThreadEntry(2, to, EntryType.ANSWER, "Return problem+json with a stable error code.", t.plusSeconds(700)),
                new ThreadEntry(2, from, EntryType.RESOLUTION, "Resolved.", t.plusSeconds(800)));
        return new ClarificationRecord(String.format("CLR-%d-%03d", issue, seq), from, to, "Approach " + issue, true,
                Status.RESOLVED, 2, 5, t, t.plusSeconds(400 + 1800), t.plusSeconds(800), List.of(), thread);
    }

    private static String ms(long nanos) {
        return String.format(Locale.ROOT, "%.1f ms", nanos / 1e6);
    }

    private static void delete(Path root) throws IOException {
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
