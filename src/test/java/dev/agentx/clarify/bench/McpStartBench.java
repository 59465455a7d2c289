package dev.agentx.clarify.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code agentx mcp}: wall time from starting the process to the answer of its first
 * {@code tools/list} (after {@code initialize}), against a JVM that runs an empty main with the
 * same flags; and the CPU a waiting {@code clarify_ask} uses while it waits. Prints Markdown, and
 * for each command a line {@code SUMMARY|<path>|<p50 ms>|<empty JVM p50 ms>|<goal ratio>} for the
 * summary table of bench/run. Not part of {@code mvn verify}: bench/mcp-bench.sh runs it.
 *
 * <p>Usage: {@code McpStartBench <empty-class-dir> <mesh-root> <runs> -- <agentx command...>}
 */
public final class McpStartBench {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The goal: start to the first tools/list answer at most this many times the empty JVM's time. */
    private static final double GOAL_RATIO = 5;

    public static void main(String[] args) throws Exception {
        Path empty = Path.of(args[0]);
        Path root = Path.of(args[1]);
        int runs = Integer.parseInt(args[2]);
        List<String> flags = new ArrayList<>();
        int i = 3;
        for (; i < args.length && !args[i].equals("--"); i++) {
            flags.add(args[i]);
        }
        List<List<String>> commands = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (i++; i < args.length; i++) {
            String[] parts = args[i].split("=", 2);
            names.add(parts[0]);
            List<String> cmd = new ArrayList<>(List.of(parts[1].split(" ")));
            cmd.addAll(List.of("--root", root.toString(), "mcp", "--agent", "engineer"));
            commands.add(cmd);
        }
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> emptyCmd = new ArrayList<>(List.of(java));
        emptyCmd.addAll(flags);
        emptyCmd.addAll(List.of("-cp", empty.toString(), "Empty"));

        // warm the page cache and the archive once each, then alternate
        runEmpty(emptyCmd);
        for (List<String> c : commands) {
            toFirstToolsList(c);
        }
        List<Double> base = new ArrayList<>();
        List<List<Double>> times = new ArrayList<>();
        commands.forEach(c -> times.add(new ArrayList<>()));
        for (int r = 0; r < runs; r++) {
            base.add(runEmpty(emptyCmd));
            for (int c = 0; c < commands.size(); c++) {
                times.get(c).add(toFirstToolsList(commands.get(c)));
            }
        }
        System.out.println("| command | runs | min | p50 | max | p50 vs empty JVM |");
        System.out.println("| --- | --- | --- | --- | --- | --- |");
        double b50 = pct(base, 50);
        row("empty JVM, same flags (start to exit)", base, b50);
        for (int c = 0; c < commands.size(); c++) {
            row(names.get(c) + " (start to first tools/list answer)", times.get(c), b50);
        }
        System.out.println();
        for (int c = 0; c < commands.size(); c++) {
            // the goal is bin/agentx's, the launcher users run; plain java -jar has neither its flags nor its archive
            String goal = names.get(c).equals("bin/agentx") ? String.format("<=%.0fx", GOAL_RATIO) : "-";
            System.out.printf("SUMMARY|`agentx mcp` start to its `tools/list` answer (%s)|%.0f ms|%.0f ms|%s%n",
                    names.get(c), pct(times.get(c), 50), b50, goal);
        }
        System.out.println();
        waitingCpu(commands.get(commands.size() - 1));
    }

    private static void row(String name, List<Double> ms, double base) {
        System.out.printf("| %s | %d | %.0f | %.0f | %.0f | %.2fx |%n", name, ms.size(), pct(ms, 0),
                pct(ms, 50), pct(ms, 100), pct(ms, 50) / base);
    }

    /** The q-th percentile (0 = min, 100 = max), nearest rank. */
    private static double pct(List<Double> values, double q) {
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(null);
        int i = (int) Math.min(sorted.size() - 1, Math.max(0, Math.ceil(q / 100 * sorted.size()) - 1));
        return sorted.get(i);
    }

    private static double runEmpty(List<String> cmd) throws Exception {
        long start = System.nanoTime();
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        p.waitFor();
        return (System.nanoTime() - start) / 1e6;
    }

    /** Start to the answer of the first tools/list, in ms; then closes stdin and waits for the exit. */
    private static double toFirstToolsList(List<String> cmd) throws Exception {
        long start = System.nanoTime();
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        try (OutputStream in = p.getOutputStream();
             BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            handshake(in, out);
            send(in, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
            JsonNode tools = await(out, 2);
            double ms = (System.nanoTime() - start) / 1e6;
            if (tools.path("result").path("tools").size() != 9) {
                throw new IllegalStateException("unexpected tools/list answer: " + tools);
            }
            in.close();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
            return ms;
        }
    }

    /** The CPU time the server process uses while a clarify_ask waits 10 s for an answer that never comes. */
    private static void waitingCpu(List<String> cmd) throws Exception {
        // in a process of its own: through the CLI's daemon the wait would be the daemon's, not this process's
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD);
        pb.environment().put("AGENTX_DAEMON", "off");
        Process p = pb.start();
        try (OutputStream in = p.getOutputStream();
             BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            handshake(in, out);
            int issue = 900_000 + (int) (System.nanoTime() % 99_999);
            send(in, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"clarify_ask\","
                    + "\"arguments\":{\"issue\":" + issue + ",\"to\":\"architect\",\"question\":\"Waiting?\","
                    + "\"wait_seconds\":12}}}");
            Thread.sleep(2000); // the question written, the JIT settled: the wait itself from here
            long cpu0 = cpuTicks(p.pid());
            long t0 = System.nanoTime();
            Thread.sleep(8000);
            long cpu1 = cpuTicks(p.pid());
            double wall = (System.nanoTime() - t0) / 1e9;
            JsonNode answer = await(out, 2);
            long hz = 100; // USER_HZ on Linux
            System.out.printf("A waiting `clarify_ask` (wait_seconds 12, no answer): %.0f ms of CPU in %.1f s of its "
                    + "wait (user+system time of the whole process, /proc/PID/stat, agentx mcp in a process of its own: "
                    + "AGENTX_DAEMON=off); the call returned %s.%n",
                    (cpu1 - cpu0) * 1000.0 / hz, wall,
                    answer.path("result").path("structuredContent").path("waited").path("outcome").asText());
            in.close();
            p.waitFor(30, TimeUnit.SECONDS);
        }
    }

    private static long cpuTicks(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime (fields 14 and 15)
    }

    /** initialize, its answer, and the initialized notification. */
    private static void handshake(OutputStream in, BufferedReader out) throws IOException {
        send(in, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                + "\"2024-11-05\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}");
        await(out, 1);
        send(in, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    }

    private static void send(OutputStream in, String line) throws IOException {
        in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        in.flush();
    }

    private static JsonNode await(BufferedReader out, int id) throws IOException {
        String line;
        while ((line = out.readLine()) != null) {
            JsonNode n = JSON.readTree(line);
            if (n.path("id").asInt(-1) == id) {
                return n;
            }
        }
        throw new IOException("the server ended before answering request " + id);
    }
}
