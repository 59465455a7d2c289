package dev.agentx.clarify.github.mcp;

import dev.agentx.clarify.github.GitHubMode;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.support.MutableClock;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * N agents, each holding a waiting {@code clarify_ask} at {@code /mcp} of one server (GitHub Mode
 * on the file store, WireMock as GitHub, in this JVM): the heap and the threads the waits hold,
 * and the delay from an answer's delivery (a person's {@code /clarify answer} comment sent as a
 * webhook) to the waiting call's result. The answers are sent one at a time, each once the last
 * one's call returned, so each delay is the path's own, not a queue's. Prints Markdown. Not part
 * of {@code mvn verify}: bench/mcp-wait-bench.sh runs it.
 *
 * <p>Usage: {@code McpWaitBench <work-dir> <agents>}
 */
public final class McpWaitBench {
    private McpWaitBench() {
    }

    public static void main(String[] args) {
        try {
            run(args);
        } catch (Throwable e) {
            // the server's threads would keep the JVM running
            e.printStackTrace();
            System.exit(1);
        }
        System.exit(0);
    }

    private static void run(String[] args) throws Exception {
        Path work = Path.of(args[0]);
        int agents = Integer.parseInt(args[1]);
        Files.createDirectories(work);
        GitHubRig rig = new GitHubRig(work.resolve("data"), MutableClock.at(Instant.now().toString()), false);
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("AGENTX_MCP_RATE_LIMIT", "1000000");
        env.put("AGENTX_MCP_WAITS_PER_CALLER", String.valueOf(agents));
        env.put("AGENTX_MCP_WAITS", String.valueOf(agents));
        env.put("AGENTX_MCP_SESSIONS_PER_CALLER", String.valueOf(agents));
        rig.environment(env);
        McpRig.stub(rig);
        McpRig.user(rig, "gho_eng", "eng");
        GitHubMode mode = rig.start();
        rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect First?"));
        rig.mode().drain();
        ExecutorService clientThreads = Executors.newFixedThreadPool(2);
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(clientThreads).build();
        String url = "http://127.0.0.1:" + mode.port() + "/mcp";

        // a session per agent, and one warm-up ask answered, before the baseline
        List<String> sessions = new ArrayList<>();
        for (int i = 0; i < agents; i++) {
            sessions.add(initialize(http, url));
        }
        CompletableFuture<Long> warm = ask(http, url, sessions.get(0), 2);
        awaitWaiting(rig, 1, List.of(warm), work);
        rig.deliver("issue_comment", rig.comment("arch", 2, "/clarify answer CLR-2-001 Warm."));
        warm.get(120, TimeUnit.SECONDS);
        rig.mode().drain();

        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long heapBefore = settledHeap(memory);
        Map<String, int[]> poolsBefore = pools();
        int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
        List<CompletableFuture<Long>> calls = new ArrayList<>();
        long asked = System.nanoTime();
        for (int i = 0; i < agents; i++) {
            calls.add(ask(http, url, sessions.get(i), 100 + i));
        }
        awaitWaiting(rig, agents, calls, work);
        double askSeconds = (System.nanoTime() - asked) / 1e9;
        rig.mode().drain(); // every question posted: the outbox holds nothing of them
        long heapWaiting = settledHeap(memory);
        int threadsWaiting = ManagementFactory.getThreadMXBean().getThreadCount();
        Map<String, int[]> poolsWaiting = pools();

        double[] delays = new double[agents];
        StringBuilder each = new StringBuilder("sent_ms,delay_ms\n");
        long answering = System.nanoTime();
        for (int i = 0; i < agents; i++) {
            int issue = 100 + i;
            long sent = System.nanoTime();
            rig.deliver("issue_comment", rig.comment("arch", issue, "/clarify answer CLR-" + issue + "-001 Yes."));
            long returned = calls.get(i).get(120, TimeUnit.SECONDS);
            delays[i] = (returned - sent) / 1e6;
            each.append(String.format("%.1f,%.2f%n", (sent - answering) / 1e6, delays[i]));
        }
        // each answer's delay by when it was sent, to see what the slow ones coincide with
        Files.writeString(work.resolve("delays.csv"), each);
        Arrays.sort(delays);

        System.out.printf("%d agents, one MCP session each, each a `clarify_ask` with `wait_seconds` 3600 on an "
                + "issue of its own; all %d waiting %.1f s after the first was sent.%n%n", agents, agents, askSeconds);
        System.out.println("| figure | value |");
        System.out.println("| --- | --- |");
        System.out.printf("| heap held per waiting call (after a full GC, waiting vs before; sessions open in both) "
                + "| %.1f KiB |%n", (heapWaiting - heapBefore) / 1024.0 / agents);
        System.out.printf("| threads of the JVM before the asks / with %d calls waiting | %d / %d |%n", agents,
                threadsBefore, threadsWaiting);
        System.out.printf("| answer's delivery sent to the call's result, p50 | %.1f ms |%n", percentile(delays, 50));
        System.out.printf("| answer's delivery sent to the call's result, p99 | %.1f ms |%n", percentile(delays, 99));
        System.out.printf("| answer's delivery sent to the call's result, max | %.1f ms |%n", delays[agents - 1]);
        System.out.println();
        System.out.printf("Threads by pool (name with its numbers as #), before the asks and with all calls waiting; "
                + "idle: parked in the pool waiting for a task. Not idle in a pool: %d before, %d waiting.%n",
                busy(poolsBefore), busy(poolsWaiting));
        System.out.println();
        System.out.println("| pool | before (idle) | waiting (idle) |");
        System.out.println("| --- | --- | --- |");
        java.util.TreeSet<String> names = new java.util.TreeSet<>(poolsBefore.keySet());
        names.addAll(poolsWaiting.keySet());
        for (String name : names) {
            int[] b = poolsBefore.getOrDefault(name, new int[2]);
            int[] w = poolsWaiting.getOrDefault(name, new int[2]);
            if (b[0] != w[0] || b[0] > 1) {
                System.out.printf("| `%s` | %d (%d) | %d (%d) |%n", name, b[0], b[1], w[0], w[1]);
            }
        }
        System.out.println();
        System.out.println("The delay spans the webhook's acknowledgement, the worker's processing of the comment "
                + "(ledger write), the wait's wake-up and the event stream's last event, in one JVM with the "
                + "client.");
        String n = String.format("%,d", agents);
        System.out.printf("SUMMARY|/mcp: heap per waiting call, %s waits|%.1f KiB|-|<1 MiB%n", n,
                (heapWaiting - heapBefore) / 1024.0 / agents);
        System.out.printf("SUMMARY|/mcp: threads, before -> with %s waits|%d -> %d (not idle in a pool: %d -> %d)|-|"
                + "no thread per wait%n", n, threadsBefore, threadsWaiting, busy(poolsBefore), busy(poolsWaiting));
        System.out.printf("SUMMARY|/mcp: answer delivery to result p99, %s waits|%.1f ms|-|<100 ms%n", n,
                percentile(delays, 99));
        clientThreads.shutdownNow();
        rig.close();
    }

    private static double percentile(double[] sorted, int p) {
        int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
    }

    private static long settledHeap(MemoryMXBean memory) throws InterruptedException {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(200);
            used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    private static HttpRequest.Builder request(String url, String session) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).header("Authorization", "Bearer gho_eng")
                .header("Accept", "application/json, text/event-stream").header("Content-Type", "application/json");
        if (session != null) {
            b.header("Mcp-Session-Id", session);
        }
        return b;
    }

    private static String initialize(HttpClient http, String url) throws Exception {
        HttpResponse<String> r = http.send(request(url, null).POST(HttpRequest.BodyPublishers.ofString(
                RemoteMcpTest.initialize())).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IllegalStateException("initialize: " + r.statusCode() + " " + r.body());
        }
        String session = r.headers().firstValue("Mcp-Session-Id").orElseThrow();
        http.send(request(url, session).POST(HttpRequest.BodyPublishers.ofString(
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}")).build(),
                HttpResponse.BodyHandlers.discarding());
        return session;
    }

    /** A waiting ask on {@code issue}; completes with System.nanoTime() when its result came. */
    private static CompletableFuture<Long> ask(HttpClient http, String url, String session, int issue) {
        String body = "{\"jsonrpc\":\"2.0\",\"id\":" + issue + ",\"method\":\"tools/call\",\"params\":{\"name\":"
                + "\"clarify_ask\",\"arguments\":{\"repository\":\"" + GitHubRig.REPO.fullName() + "\",\"issue\":"
                + issue + ",\"to\":\"architect\",\"question\":\"Which region for #" + issue + "?\","
                + "\"wait_seconds\":3600}}}";
        return http.sendAsync(request(url, session).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString()).thenApply(r -> {
                    long at = System.nanoTime();
                    if (r.statusCode() != 200 || !r.body().contains("Yes.") && !r.body().contains("Warm.")) {
                        throw new IllegalStateException("#" + issue + ": " + r.statusCode() + " " + r.body());
                    }
                    return at;
                });
    }

    /**
     * Until {@code n} calls wait: a call that returned meanwhile (refused, failed, its connection
     * broken) ends the bench with its reason; so does a stall of 10 minutes, after writing the
     * threads' stacks to {@code threads-stalled.txt}. The count so far goes to stderr every 10 s.
     */
    private static void awaitWaiting(GitHubRig rig, int n, List<CompletableFuture<Long>> calls, Path work)
            throws Exception {
        long start = System.nanoTime();
        long until = start + Duration.ofMinutes(10).toNanos();
        long told = start;
        while (true) {
            String metrics = rig.metrics();
            if (metrics.contains("\nagentx_mcp_waiting_calls " + n + ".0")) {
                return;
            }
            for (int i = 0; i < calls.size(); i++) {
                CompletableFuture<Long> c = calls.get(i);
                if (c.isDone()) {
                    try {
                        c.join();
                        throw new IllegalStateException("call " + i + " returned before its answer was sent");
                    } catch (java.util.concurrent.CompletionException e) {
                        throw new IllegalStateException("call " + i + " failed: " + e.getCause(), e.getCause());
                    }
                }
            }
            long now = System.nanoTime();
            if (now - told > Duration.ofSeconds(10).toNanos()) {
                told = now;
                System.err.printf("%.0f s: %s%n", (now - start) / 1e9, metrics.lines()
                        .filter(l -> l.startsWith("agentx_mcp_waiting_calls ")).findFirst().orElse("no gauge"));
            }
            if (now > until) {
                StringBuilder dump = new StringBuilder();
                Thread.getAllStackTraces().forEach((t, stack) -> {
                    dump.append('"').append(t.getName()).append("\" ").append(t.getState()).append('\n');
                    for (StackTraceElement e : stack) {
                        dump.append("\tat ").append(e).append('\n');
                    }
                    dump.append('\n');
                });
                Files.writeString(work.resolve("threads-stalled.txt"), dump);
                throw new IllegalStateException("never " + n + " calls waiting; threads in " + work
                        .resolve("threads-stalled.txt") + "; the metrics:\n" + metrics);
            }
            Thread.sleep(50);
        }
    }

    /** Threads that are not idle in a pool ({@link #pools}). */
    private static int busy(Map<String, int[]> pools) {
        return pools.values().stream().mapToInt(c -> c[0] - c[1]).sum();
    }

    /**
     * The JVM's threads by pool (the name with its numbers as {@code #}, and without Jetty's
     * {@code @connector} tail): how many, and how many of them idle (parked in their pool's wait
     * for a task: Jetty's idle poll or reserved wait, an executor's queue).
     */
    private static Map<String, int[]> pools() {
        Map<String, int[]> pools = new java.util.TreeMap<>();
        Thread.getAllStackTraces().forEach((t, stack) -> {
            String name = t.getName().replaceAll("@.*", "").replaceAll("[0-9]+", "#");
            int[] counts = pools.computeIfAbsent(name, k -> new int[2]);
            counts[0]++;
            for (StackTraceElement e : stack) {
                String m = e.getClassName() + "." + e.getMethodName();
                if (m.endsWith("QueuedThreadPool$Runner.idleJobPoll") || m.endsWith("ReservedThread.reservedWait")
                        || m.equals("java.util.concurrent.ThreadPoolExecutor.getTask")) {
                    counts[1]++;
                    break;
                }
            }
        });
        return pools;
    }
}
