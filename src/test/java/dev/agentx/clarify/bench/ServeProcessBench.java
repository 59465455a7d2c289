package dev.agentx.clarify.bench;

import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.github.support.Keys;
import dev.agentx.clarify.support.FreePorts;
import dev.agentx.clarify.support.MutableClock;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code agentx serve} in a process of its own ({@code java -jar target/agentx.jar serve}, on the
 * files store), with the JVM flags and heap a deployment gives it, at a steady rate of the webhook
 * bench's deliveries; the result is the server's own collections, read from its GC log. The webhook
 * bench runs the server in its JVM, beside the load generator and the stub, so its heap and its
 * collections are theirs too; this one measures a flag or a heap size as a container runs it.
 *
 * <p>Usage: {@code ServeProcessBench <workdir> <jar> "<server JVM flags>" [rate] [seconds]}. The
 * server starts cold, as a replica does in a rolling update: the acknowledgements are given for the
 * whole run and after its first 30 s.
 */
public final class ServeProcessBench {
    private static final Pattern PAUSE = Pattern.compile(
            "GC\\(\\d+\\) Pause (Young \\((?:Normal|Concurrent Start|Prepare Mixed|Mixed)\\)|Full|Remark|Cleanup)"
                    + ".*?(\\d+)M->(\\d+)M\\((\\d+)M\\) ([\\d.]+)ms");
    private static final Pattern CYCLE = Pattern.compile("GC\\(\\d+\\) Concurrent Mark Cycle [\\d.]+ms");
    private static final long SETTLED_NANOS = 30_000_000_000L;

    private ServeProcessBench() {
    }

    public static void main(String[] args) throws Exception {
        Path work = Path.of(args[0]);
        Path jar = Path.of(args[1]);
        String flags = args[2].trim();
        int rate = args.length > 3 ? Integer.parseInt(args[3]) : 200;
        int seconds = args.length > 4 ? Integer.parseInt(args[4]) : 120;
        if (Files.exists(work.resolve("data"))) {
            throw new IllegalArgumentException(work.resolve("data") + " exists: give the benchmark a new directory");
        }
        Files.createDirectories(work);
        GitHubRig rig = new GitHubRig(work.resolve("data"), MutableClock.at(Clock.systemUTC().instant().toString()),
                false);
        AtomicLong posted = new AtomicLong();
        // every delivery made and signed before the server starts, so that none of it runs beside the load
        int total = rate * seconds;
        List<WebhookBench.Delivery> deliveries = WebhookBench.deliveries(rig, new AtomicInteger(1000), total);
        try (GitHubStub github = new GitHubStub(GitHubRig.API_REPO, (issue, body) -> posted.incrementAndGet())) {
            int port = FreePorts.next();
            int managementPort = FreePorts.next();
            Path gcLog = work.resolve("server-gc.log");
            List<String> command = new ArrayList<>(List.of("java"));
            command.addAll(Arrays.asList(flags.split("\\s+")));
            command.addAll(List.of("-Xlog:gc:file=" + gcLog + ":uptime", "-jar", jar.toString(), "serve"));
            ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(work.resolve("server.log").toFile());
            Map<String, String> env = pb.environment();
            env.remove("JAVA_TOOL_OPTIONS"); // the flags are the ones given
            env.put("PORT", String.valueOf(port));
            env.put("AGENTX_MANAGEMENT_PORT", String.valueOf(managementPort));
            env.put("AGENTX_DATA_DIR", work.resolve("data").toString());
            env.put("GITHUB_APP_ID", String.valueOf(GitHubRig.APP_ID));
            env.put("GITHUB_WEBHOOK_SECRET", GitHubRig.SECRET);
            env.put("GITHUB_APP_PRIVATE_KEY", Keys.pkcs8Pem());
            env.put("GITHUB_API_URL", github.baseUrl());
            env.put("AGENTX_REDELIVERY_INTERVAL", "0");
            env.put("AGENTX_LOG_LEVEL", "WARN");
            Process server = pb.start();
            try {
                awaitReady(server, managementPort, work.resolve("server.log"));
                BusySeconds machine = new BusySeconds(work.resolve("data"));
                long from = System.nanoTime();
                WebhookBench.Run acks = new WebhookBench().openLoop("http://127.0.0.1:" + port
                        + "/api/github/webhooks", deliveries, rate, null);
                machine.close();
                long waited = System.nanoTime();
                while (posted.get() < total && System.nanoTime() - waited < 60_000_000_000L) {
                    Thread.sleep(200); // each delivery posts one comment: the server has worked off its backlog
                }
                double drain = (System.nanoTime() - waited) / 1e9;
                server.destroy(); // SIGTERM: the server flushes and ends, and its GC log with it
                server.waitFor(30, TimeUnit.SECONDS);
                report(flags, rate, seconds, acks, total, posted.get(), drain, gcLog, machine.since(from));
            } finally {
                server.destroyForcibly();
            }
        }
        System.exit(0);
    }

    private static void awaitReady(Process server, int managementPort, Path log) throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        HttpRequest ready = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + managementPort + "/readyz")).build();
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (System.nanoTime() < deadline && server.isAlive()) {
            try {
                if (http.send(ready, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                    return;
                }
            } catch (IOException e) {
                // not listening yet
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("the server did not become ready; its log:\n" + Files.readString(log));
    }

    private static void report(String flags, int rate, int seconds, WebhookBench.Run acks, int total, long posted,
            double drain, Path gcLog, BusySeconds.Second machine) throws IOException {
        long first = WebhookBench.firstDue(acks);
        List<Long> settled = new ArrayList<>();
        synchronized (acks.timed()) {
            for (long[] a : acks.timed()) {
                if (a[0] - first >= SETTLED_NANOS) {
                    settled.add(a[1]);
                }
            }
        }
        System.out.printf("Server: `java %s -jar agentx.jar serve` in a process of its own, files store; %d signed "
                + "`issue_comment` deliveries at %d/s for %d s (the webhook bench's clarifications) from the bench's "
                + "JVM over plain kept-alive sockets, GitHub played by the bench's stub.%n%n", flags, total, rate,
                seconds);
        System.out.println("| acks | errors (HTTP status, 0: no answer) | p50 | p99 | max | p99 after the first 30 s | "
                + "comments posted | backlog worked off after the load |");
        System.out.println("| --- | --- | --- | --- | --- | --- | --- | --- |");
        Stats s = Stats.ofNanos(acks.ackNanos());
        Stats t = Stats.ofNanos(settled);
        System.out.printf("| %d | %s | %.2f | %.2f | %.2f | %.2f | %d | %.1f s |%n%n", s.n(), acks.failures().isEmpty() ? "0"
                : acks.failures().toString(), s.p50(), s.p99(), s.max(), t.p99(), posted, drain);
        System.out.println("The server's collections (its own `-Xlog:gc`): " + collections(Files.readAllLines(gcLog))
                + ".");
        System.out.println();
        System.out.println("The machine during the load: " + machine.machine() + ".");
    }

    /**
     * e.g. {@code pauses 2 Remark, 230 Young (Normal), ...; 3239 ms in all, longest 35.6 ms; concurrent
     * cycles: 2; ...}.
     */
    static String collections(List<String> gcLog) {
        Map<String, Integer> kinds = new TreeMap<>();
        double total = 0;
        double longest = 0;
        int cycles = 0;
        String lastHeap = "?";
        for (String line : gcLog) {
            Matcher m = PAUSE.matcher(line);
            if (m.find()) {
                double ms = Double.parseDouble(m.group(5));
                kinds.merge(m.group(1), 1, Integer::sum);
                total += ms;
                longest = Math.max(longest, ms);
                lastHeap = m.group(3) + " MB used of " + m.group(4) + " MB";
            } else if (CYCLE.matcher(line).find()) {
                cycles++;
            }
        }
        StringBuilder pauses = new StringBuilder();
        kinds.forEach((kind, n) -> pauses.append(pauses.length() == 0 ? "" : ", ").append(n).append(' ').append(kind));
        return String.format("pauses %s; %.0f ms in all, longest %.1f ms; concurrent cycles: %d; full collections: "
                + "%d; after the last pause %s", pauses.length() == 0 ? "none" : pauses, total, longest, cycles,
                kinds.getOrDefault("Full", 0), lastHeap);
    }
}
