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

    public static void main(String[] args) throws Exception {
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
        awaitWaiting(rig, 1);
        rig.deliver("issue_comment", rig.comment("arch", 2, "/clarify answer CLR-2-001 Warm."));
        warm.get(120, TimeUnit.SECONDS);
        rig.mode().drain();

        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long heapBefore = settledHeap(memory);
        int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();
        List<CompletableFuture<Long>> calls = new ArrayList<>();
        long asked = System.nanoTime();
        for (int i = 0; i < agents; i++) {
            calls.add(ask(http, url, sessions.get(i), 100 + i));
        }
        awaitWaiting(rig, agents);
        double askSeconds = (System.nanoTime() - asked) / 1e9;
        rig.mode().drain(); // every question posted: the outbox holds nothing of them
        long heapWaiting = settledHeap(memory);
        int threadsWaiting = ManagementFactory.getThreadMXBean().getThreadCount();

        double[] delays = new double[agents];
        for (int i = 0; i < agents; i++) {
            int issue = 100 + i;
            long sent = System.nanoTime();
            rig.deliver("issue_comment", rig.comment("arch", issue, "/clarify answer CLR-" + issue + "-001 Yes."));
            long returned = calls.get(i).get(120, TimeUnit.SECONDS);
            delays[i] = (returned - sent) / 1e6;
        }
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
        System.out.println("The delay spans the webhook's acknowledgement, the worker's processing of the comment "
                + "(ledger write), the wait's wake-up and the event stream's last event, in one JVM with the "
                + "client.");
        clientThreads.shutdownNow();
        rig.close();
        System.exit(0);
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

    private static void awaitWaiting(GitHubRig rig, int calls) throws InterruptedException {
        long until = System.nanoTime() + Duration.ofMinutes(10).toNanos();
        while (!rig.metrics().contains("\nagentx_mcp_waiting_calls " + calls + ".0")) {
            if (System.nanoTime() > until) {
                throw new IllegalStateException("never " + calls + " calls waiting");
            }
            Thread.sleep(50);
        }
    }
}
