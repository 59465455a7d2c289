package dev.agentx.clarify.bench;

import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.support.MutableClock;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Path;

/**
 * The heap GitHub Mode keeps for good per delivery it processed: what its dedup memories hold (the
 * inbox's delivery ids for 8 days, the outbox's effect keys for 30 days) and the mirror's state per
 * issue. Each delivery is a {@code /clarify} question (a comment, a label and a reaction queued and
 * sent), first each on an issue of its own, then all on the same 100 issues; the difference is what
 * a new issue adds. The heap is measured after full collections, so only what stays reachable
 * counts. The stub keeps no request journal.
 *
 * <p>Usage: {@code RetainedMemory <workdir> [deliveries]} (default 3000). Prints Markdown. With
 * {@code -Dretained.histogram=true} it also appends {@code jcmd GC.class_histogram} at each of the
 * three points to {@code <workdir>/retained-histogram.txt}, to tell which classes grow.
 */
public final class RetainedMemory {
    private RetainedMemory() {
    }

    public static void main(String[] args) throws Exception {
        Path work = Path.of(args[0]);
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 3000;
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        GitHubRig rig = new GitHubRig(work.resolve("data"), clock, false);
        try {
            rig.start();
            deliver(rig, 1, 500, 500); // warm-up: the JIT, caches, the 100 issues' ledgers
            Path histogram = work.resolve("retained-histogram.txt");
            long base = usedAfterGc(histogram);
            deliver(rig, 1_000, n, n);
            long newIssues = usedAfterGc(histogram);
            deliver(rig, 1, n, 100);
            long sameIssues = usedAfterGc(histogram);
            double perNewIssue = (newIssues - base) / (double) n;
            double perDelivery = (sameIssues - newIssues) / (double) n;
            System.out.println("| deliveries | on | heap kept after full GC | per delivery |");
            System.out.println("| --- | --- | --- | --- |");
            System.out.printf("| %d | an issue each | %.1f MB | %.0f bytes |%n", n, (newIssues - base) / 1e6,
                    perNewIssue);
            System.out.printf("| %d | 100 issues | %.1f MB | %.0f bytes |%n", n, (sameIssues - newIssues) / 1e6,
                    perDelivery);
            double perIssue = perNewIssue - perDelivery;
            if (perIssue > 0) {
                System.out.printf("%nA new issue adds about %.0f bytes (the mirror's state and the like, kept as"
                        + " long as the issue's ledger); the rest is the dedup memories, forgotten after 8 days"
                        + " (delivery ids) and 30 days (effect keys).%n", perIssue);
            } else {
                // the 100 issues' ledgers end with 30 questions each, and what is kept of a
                // ledger grows with its questions: that growth outweighed what a new issue costs
                System.out.printf("%nA delivery on an issue of its own kept no more than one on the 100 shared"
                        + " issues (%.0f against %.0f bytes), whose ledgers end with %d questions each: what"
                        + " a new issue costs is within what a shared issue's growing ledger adds.%n",
                        perNewIssue, perDelivery, n / 100);
            }
        } finally {
            rig.close();
        }
    }

    /** Delivers {@code count} questions on issues {@code first}, {@code first + 1}, ... cycling over {@code issues}. */
    private static void deliver(GitHubRig rig, int first, int count, int issues) {
        for (int i = 0; i < count; i++) {
            int issue = first + i % issues;
            GitHubRig.Response r = rig.deliver("issue_comment", rig.comment("eng", issue,
                    "/clarify @architect --non-blocking Question " + i + "?"));
            if (r.status() != 202) {
                throw new IllegalStateException("delivery " + i + ": HTTP " + r.status() + " " + r.body());
            }
        }
    }

    private static long usedAfterGc(Path histogram) throws InterruptedException, java.io.IOException {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(200);
        }
        long used = memory.getHeapMemoryUsage().getUsed();
        if (Boolean.getBoolean("retained.histogram")) { // each class's count and bytes, to tell what grew
            new ProcessBuilder("jcmd", String.valueOf(ProcessHandle.current().pid()), "GC.class_histogram")
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(histogram.toFile())).start().waitFor();
        }
        return used;
    }
}
