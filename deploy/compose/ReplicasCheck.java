import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPairGenerator;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Runs {@code compose.yaml} as it is, with a fake GitHub, and checks what the recipe promises:
 * deliveries spread over both replicas, none lost and none handled twice while a replica stops,
 * is killed, or the database goes away and comes back. From the repository root, with Docker and
 * its compose plugin:
 *
 * <pre>
 *   java deploy/compose/ReplicasCheck.java          # builds the image, about 3 minutes the first time
 *   java deploy/compose/ReplicasCheck.java --keep   # leaves the containers up to look at afterwards
 *                                                   # (as a failed check does)
 * </pre>
 *
 * It copies {@code compose.yaml} and {@code nginx.conf} unchanged into a temporary folder, beside
 * an env file, an {@code agentx.toml} and a throwaway App key of its own, and adds one override:
 * the build context (the repository) and a host name for the fake GitHub, which listens on this
 * machine. The stack runs as the compose project {@code agentx-check} (its own containers and
 * volumes, removed at the end) but publishes the proxy on port 8080 as the recipe does, so a stack
 * of the recipe itself must not be running. Needs only a JDK: no Maven, no project classes.
 */
public final class ReplicasCheck {
    static final String PROJECT = "agentx-check";
    static final String REPO = "acme/check";
    static final String WEBHOOK = "http://127.0.0.1:8080/api/github/webhooks";
    static final String SECRET = "replicas-check-secret";

    final Path work;
    final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    final FakeGitHub github = new FakeGitHub();
    final List<String> problems = new ArrayList<>();
    final Map<Integer, String> sent = new TreeMap<>(); // issue -> delivery id

    ReplicasCheck(Path work) {
        this.work = work;
    }

    public static void main(String[] args) throws Exception {
        boolean keep = List.of(args).contains("--keep");
        Path compose = Path.of("deploy/compose/compose.yaml");
        if (!Files.isRegularFile(compose)) {
            System.err.println("run this from the repository root (deploy/compose/compose.yaml not found)");
            System.exit(2);
        }
        ReplicasCheck check = new ReplicasCheck(Files.createTempDirectory("agentx-replicas-check"));
        int rc = 1;
        try {
            rc = check.run();
        } finally {
            keep |= rc != 0; // a failed check leaves the stack up to be looked at
            if (!keep) {
                check.compose("down", "-v", "--remove-orphans");
            } else {
                System.out.println("left running: docker compose -p " + PROJECT + " -f "
                        + check.work.resolve("deploy/compose/compose.yaml") + " -f "
                        + check.work.resolve("deploy/compose/check.yaml") + " down -v  (to remove it)");
            }
            check.github.stop();
        }
        System.exit(rc);
    }

    int run() throws Exception {
        int port = github.start();
        prepare(port);
        step("build and start: db, agentx-1, agentx-2, proxy");
        requireOk(compose("up", "--build", "--detach", "--wait", "--wait-timeout", "600"), "docker compose up");
        waitForProxy();

        step("40 deliveries at 20/s, spread over both replicas");
        Map<String, Integer> spread = burst(1, 40, null);
        expectAllAcknowledged("spread", spread);
        String logs1 = logs("agentx-1");
        String logs2 = logs("agentx-2");
        long on1 = count(logs1, "delivery check-\\d+ \\(issue_comment\\) queued");
        long on2 = count(logs2, "delivery check-\\d+ \\(issue_comment\\) queued");
        System.out.printf("  acknowledged by agentx-1: %d, by agentx-2: %d%n", on1, on2);
        if (on1 == 0 || on2 == 0) {
            problems.add("spread: one replica received no delivery (" + on1 + " / " + on2 + ")");
        }

        step("200 deliveries at 20/s; agentx-1 stopped (SIGTERM) after 3 s");
        Map<String, Integer> stop = burst(101, 200, new Disruption(3_000, () -> compose("stop", "agentx-1")));
        refusedAndRedelivered("stop", stop, 101, 200);
        restarted("agentx-1");

        step("200 deliveries at 20/s; agentx-2 killed (SIGKILL) after 3 s");
        Map<String, Integer> kill = burst(301, 200, new Disruption(3_000, () -> compose("kill", "agentx-2")));
        refusedAndRedelivered("kill", kill, 301, 200);
        restarted("agentx-2");

        step("200 deliveries at 20/s; the database stopped after 2 s, started 4 s later");
        Map<String, Integer> outage = burst(501, 200, new Disruption(2_000, () -> {
            compose("stop", "db");
            sleep(4_000);
            compose("start", "db");
        }));
        requireOk(compose("up", "--detach", "--wait", "--wait-timeout", "300"), "database back");
        refusedAndRedelivered("database", outage, 501, 200);

        step("every delivery sent again: each answered as a duplicate");
        Map<String, Integer> again = new TreeMap<>();
        for (Map.Entry<Integer, String> e : sent.entrySet()) {
            again.merge(String.valueOf(deliver(e.getValue(), e.getKey())), 1, Integer::sum);
        }
        System.out.printf("  answered %s%n", again);
        if (!again.keySet().equals(java.util.Set.of("200"))) {
            problems.add("redelivery: expected only 200 (duplicate), got " + again);
        }

        step("comments on the fake GitHub: one per question, none twice");
        settleComments();
        return report();
    }

    /**
     * Starts {@code service} again and waits until it is healthy and the proxy knows its address:
     * a container started again may get a new one, and nginx looks the names up every 10 s
     * ({@code resolver ... valid=10s}). Until then the proxy has only the other replica, so a
     * second failure in those seconds would fail deliveries (GitHub's redelivery would bring them).
     */
    void restarted(String service) {
        requireOk(compose("up", "--detach", "--wait", "--wait-timeout", "300"), "start " + service + " again");
        sleep(12_000);
    }

    void prepare(int githubPort) throws Exception {
        Path compose = work.resolve("deploy/compose");
        Files.createDirectories(compose);
        Files.copy(Path.of("deploy/compose/compose.yaml"), compose.resolve("compose.yaml"));
        Files.copy(Path.of("deploy/compose/nginx.conf"), compose.resolve("nginx.conf"));
        String root = Path.of("").toAbsolutePath().toString();
        Files.writeString(compose.resolve("check.yaml"), String.join("\n",
                "# the check's only change to compose.yaml: where the repository is, and the host its fake GitHub runs on",
                "services:",
                "  agentx-1:",
                "    build:",
                "      context: " + quote(root),
                "    extra_hosts: [\"github.check:host-gateway\"]",
                "  agentx-2:",
                "    build:",
                "      context: " + quote(root),
                "    extra_hosts: [\"github.check:host-gateway\"]",
                ""));
        Files.writeString(work.resolve("deploy/agentx.env"), String.join("\n",
                "GITHUB_APP_ID=1",
                "GITHUB_APP_PRIVATE_KEY_FILE=/etc/agentx/app.pem",
                "GITHUB_WEBHOOK_SECRET=" + SECRET,
                "GITHUB_API_URL=http://github.check:" + githubPort,
                "AGENTX_LOG_FORMAT=text",
                ""));
        Files.writeString(compose.resolve("agentx.toml"), String.join("\n",
                "[roles]", "architect = [\"arch\"]", "engineer = [\"eng\"]", ""));
        KeyPairGenerator rsa = KeyPairGenerator.getInstance("RSA");
        rsa.initialize(2048);
        String pem = "-----BEGIN PRIVATE KEY-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                        .encodeToString(rsa.generateKeyPair().getPrivate().getEncoded())
                + "\n-----END PRIVATE KEY-----\n";
        Path key = compose.resolve("app.pem");
        Files.writeString(key, pem);
        // a throwaway key, readable by the image's user (uid 10001) whoever runs the check
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-r--r--"));
        System.out.println("working folder " + work + ", fake GitHub on port " + githubPort);
    }

    record Disruption(long afterMillis, Runnable action) {}

    /** {@code count} questions on issues {@code first}.., one per issue, paced at 20/s. */
    Map<String, Integer> burst(int first, int count, Disruption disruption) throws Exception {
        Thread disrupt = null;
        if (disruption != null) {
            disrupt = new Thread(() -> {
                sleep(disruption.afterMillis());
                disruption.action().run();
            });
            disrupt.start();
        }
        Map<String, Integer> answers = new ConcurrentHashMap<>();
        List<Integer> issues = new ArrayList<>();
        long start = System.nanoTime();
        var pool = Executors.newFixedThreadPool(16);
        try {
            List<java.util.concurrent.Future<?>> pending = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                int issue = first + i;
                String id = "check-" + issue;
                sent.put(issue, id);
                issues.add(issue);
                long due = start + i * 50_000_000L;
                long wait = due - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                }
                pending.add(pool.submit(() -> {
                    int status = deliver(id, issue);
                    answers.merge(String.valueOf(status), 1, Integer::sum);
                    lastStatus.put(issue, status);
                    return null;
                }));
            }
            for (var f : pending) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
        if (disrupt != null) {
            disrupt.join();
        }
        return new TreeMap<>(answers);
    }

    final Map<Integer, Integer> lastStatus = new ConcurrentHashMap<>();

    /**
     * What the proxy answered in a phase. 202 is acknowledged, and so is 200: a copy the proxy
     * passed on after the first replica took it and went away before answering. Anything else
     * GitHub records as failed and sends again (the recovery pass): so does the check, until each
     * is acknowledged. A stopped replica may cost a delivery that; an acknowledged one is never lost.
     */
    void refusedAndRedelivered(String phase, Map<String, Integer> answers, int first, int count) {
        List<Integer> refused = new ArrayList<>();
        for (int issue = first; issue < first + count; issue++) {
            int status = lastStatus.getOrDefault(issue, -1);
            if (status != 202 && status != 200) {
                refused.add(issue);
            }
        }
        System.out.printf("  answered %s; %d not acknowledged, sent again as GitHub's redelivery would%n", answers,
                refused.size());
        redeliverUntilAcknowledged(phase, refused);
    }

    void redeliverUntilAcknowledged(String phase, List<Integer> issues) {
        List<Integer> left = new ArrayList<>(issues);
        Instant giveUp = Instant.now().plusSeconds(120);
        while (!left.isEmpty() && Instant.now().isBefore(giveUp)) {
            left.removeIf(issue -> {
                int status = deliver(sent.get(issue), issue);
                return status == 202 || status == 200;
            });
            if (!left.isEmpty()) {
                sleep(2_000);
            }
        }
        if (!left.isEmpty()) {
            problems.add(phase + ": " + left.size() + " deliveries still not acknowledged after 2 minutes of redelivery");
        }
    }

    void expectAllAcknowledged(String phase, Map<String, Integer> answers) {
        System.out.printf("  answered %s%n", answers);
        if (!answers.keySet().equals(java.util.Set.of("202"))) {
            problems.add(phase + ": expected every delivery acknowledged (202), got " + answers);
        }
    }

    /** A signed {@code issue_comment} delivery as GitHub sends it; the HTTP status, or -1 when none came. */
    int deliver(String id, int issue) {
        String text = "/clarify @architect Which auth method for issue " + issue + "?";
        String body = "{\"action\":\"created\","
                + "\"issue\":{\"number\":" + issue + ",\"title\":\"Check " + issue + "\",\"state\":\"open\","
                + "\"labels\":[],\"user\":{\"login\":\"eng\",\"id\":2,\"type\":\"User\"},\"body\":\"\"},"
                + "\"comment\":{\"id\":" + (100_000 + issue) + ",\"body\":" + json(text) + ","
                + "\"user\":{\"login\":\"eng\",\"id\":2,\"type\":\"User\"},\"author_association\":\"MEMBER\"},"
                + "\"repository\":{\"id\":10,\"name\":\"check\",\"full_name\":\"" + REPO + "\","
                + "\"owner\":{\"login\":\"acme\",\"id\":1,\"type\":\"Organization\"},\"private\":true},"
                + "\"sender\":{\"login\":\"eng\",\"id\":2,\"type\":\"User\"},\"installation\":{\"id\":1}}";
        return post(id, "issue_comment", body);
    }

    int post(String id, String event, String body) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        try {
            HttpRequest request = HttpRequest.newBuilder(URI.create(WEBHOOK))
                    .timeout(Duration.ofSeconds(15))
                    .header("Content-Type", "application/json")
                    .header("X-GitHub-Event", event)
                    .header("X-GitHub-Delivery", id)
                    .header("X-Hub-Signature-256", "sha256=" + hmac(bytes))
                    .POST(HttpRequest.BodyPublishers.ofByteArray(bytes))
                    .build();
            return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    void waitForProxy() {
        Instant giveUp = Instant.now().plusSeconds(120);
        while (Instant.now().isBefore(giveUp)) {
            int status = post("check-ping-" + System.nanoTime(), "ping", "{\"zen\":\"Keep it logically awesome.\",\"hook_id\":1}");
            if (status == 200 || status == 202) {
                return;
            }
            sleep(1_000);
        }
        throw new IllegalStateException("the proxy on port 8080 did not pass a ping to a replica within 2 minutes");
    }

    /**
     * Waits for a comment on every issue asked on, then a little longer for any second one. A
     * delivery whose processing failed while the database was away is tried again after 10 s,
     * 20 s, 40 s and so on: five minutes covers the outage's retries.
     */
    void settleComments() {
        Instant start = Instant.now();
        Instant giveUp = start.plusSeconds(300);
        while (Instant.now().isBefore(giveUp) && github.commentedIssues() < sent.size()) {
            sleep(1_000);
        }
        System.out.printf("  waited %d s for the last question to be posted%n",
                Duration.between(start, Instant.now()).toSeconds());
        sleep(5_000);
        int missing = 0;
        int doubled = 0;
        List<Integer> missingIssues = new ArrayList<>();
        for (int issue : sent.keySet()) {
            long n = github.questionComments(issue);
            if (n == 0) {
                missing++;
                missingIssues.add(issue);
            } else if (n > 1) {
                doubled++;
                problems.add("issue " + issue + ": the question was posted " + n + " times");
            }
        }
        System.out.printf("  %d questions, %d comments posted in all; missing on %d issues, posted twice on %d%n",
                sent.size(), github.posted.size(), missing, doubled);
        if (missing > 0) {
            problems.add(missing + " acknowledged questions were not posted within 5 minutes, on issues "
                    + missingIssues);
        }
        if (!github.unknown.isEmpty()) {
            System.out.println("  the fake GitHub had no answer for: " + github.unknown);
        }
    }

    int report() {
        List<String> proxyErrors = compose("logs", "--no-log-prefix", "proxy").out().lines()
                .filter(l -> l.contains("[error]")).toList();
        System.out.println("\nthe proxy logged " + proxyErrors.size() + " errors (a replica stopped, killed or "
                + "refusing while the database was away)");
        if (!problems.isEmpty()) {
            proxyErrors.stream().filter(l -> !l.contains("could not be resolved")).limit(20)
                    .forEach(l -> System.out.println("  " + l));
        }
        if (problems.isEmpty()) {
            System.out.println("\nOK: every delivery acknowledged was handled once, across a stop, a kill and a database outage.");
            return 0;
        }
        System.out.println("\nFAILED:");
        problems.forEach(p -> System.out.println("  - " + p));
        return 1;
    }

    // --- docker compose ---------------------------------------------------------------------

    record Run(int rc, String out) {}

    Run compose(String... args) {
        List<String> cmd = new ArrayList<>(List.of("docker", "compose", "-p", PROJECT,
                "-f", work.resolve("deploy/compose/compose.yaml").toString(),
                "-f", work.resolve("deploy/compose/check.yaml").toString()));
        cmd.addAll(List.of(args));
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            return new Run(p.waitFor(), out);
        } catch (IOException e) {
            return new Run(127, "cannot run docker: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Run(130, "interrupted");
        }
    }

    void requireOk(Run run, String what) {
        if (run.rc() != 0) {
            throw new IllegalStateException(what + " failed (exit " + run.rc() + "):\n" + run.out());
        }
    }

    String logs(String service) {
        return compose("logs", "--no-log-prefix", service).out();
    }

    static long count(String text, String regex) {
        return Pattern.compile(regex).matcher(text).results().count();
    }

    static void step(String title) {
        System.out.println("\n== " + title);
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static String hmac(byte[] body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(SECRET.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            return HexFormat.of().formatHex(mac.doFinal(body));
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    static String quote(String s) {
        return "'" + s.replace("'", "''") + "'";
    }

    static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }

    /** The first string value of {@code key} in a JSON object (enough for a comment's {@code body}). */
    static String stringField(String jsonText, String key) {
        Matcher m = Pattern.compile("\"" + Pattern.quote(key) + "\"\\s*:\\s*\"").matcher(jsonText);
        if (!m.find()) {
            return "";
        }
        StringBuilder b = new StringBuilder();
        for (int i = m.end(); i < jsonText.length(); i++) {
            char c = jsonText.charAt(i);
            if (c == '"') {
                break;
            }
            if (c == '\\' && i + 1 < jsonText.length()) {
                char e = jsonText.charAt(++i);
                switch (e) {
                    case 'n' -> b.append('\n');
                    case 'r' -> b.append('\r');
                    case 't' -> b.append('\t');
                    case 'b' -> b.append('\b');
                    case 'f' -> b.append('\f');
                    case 'u' -> {
                        b.append((char) Integer.parseInt(jsonText.substring(i + 1, i + 5), 16));
                        i += 4;
                    }
                    default -> b.append(e);
                }
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    // --- the fake GitHub ----------------------------------------------------------------------

    /**
     * What the App calls on GitHub for these deliveries: an installation token, issue comments
     * (listed back as posted, as GitHub does, for the App's look-up after a crash), reactions,
     * labels, a collaborator's permission, the repository's optional config file and the App's
     * delivery list for the recovery pass. Anything else is answered 404 and reported.
     */
    static final class FakeGitHub {
        final List<String[]> posted = new CopyOnWriteArrayList<>(); // {issue, body}
        final Map<Integer, List<String>> comments = new ConcurrentHashMap<>();
        final Map<String, Integer> unknown = new ConcurrentHashMap<>();
        final AtomicLong ids = new AtomicLong(5_000);
        HttpServer server;

        int start() throws IOException {
            server = HttpServer.create(new InetSocketAddress("0.0.0.0", 0), 64);
            server.setExecutor(Executors.newFixedThreadPool(8));
            server.createContext("/", this::handle);
            server.start();
            return server.getAddress().getPort();
        }

        void stop() {
            if (server != null) {
                server.stop(0);
                ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
            }
        }

        int commentedIssues() {
            return (int) comments.values().stream().filter(l -> l.stream().anyMatch(ReplicasCheck::isQuestion)).count();
        }

        long questionComments(int issue) {
            return comments.getOrDefault(issue, List.of()).stream().filter(ReplicasCheck::isQuestion).count();
        }

        void handle(HttpExchange x) throws IOException {
            String method = x.getRequestMethod();
            String path = x.getRequestURI().getPath();
            String body;
            try (InputStream in = x.getRequestBody()) {
                body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            String repo = "/repos/" + REPO;
            Matcher comment = Pattern.compile(Pattern.quote(repo) + "/issues/(\\d+)/comments").matcher(path);
            if (method.equals("POST") && path.matches("/app/installations/\\d+/access_tokens")) {
                answer(x, 201, "{\"token\":\"ghs_check\",\"expires_at\":\"" + Instant.now().plusSeconds(3600) + "\"}");
            } else if (comment.matches() && method.equals("POST")) {
                int issue = Integer.parseInt(comment.group(1));
                String text = stringField(body, "body");
                long id = ids.incrementAndGet();
                posted.add(new String[] {String.valueOf(issue), text});
                comments.computeIfAbsent(issue, k -> new CopyOnWriteArrayList<>()).add(text);
                answer(x, 201, commentJson(id, text));
            } else if (comment.matches() && method.equals("GET")) {
                int issue = Integer.parseInt(comment.group(1));
                StringBuilder list = new StringBuilder("[");
                long id = 1;
                for (String text : comments.getOrDefault(issue, List.of())) {
                    list.append(list.length() > 1 ? "," : "").append(commentJson(id++, text));
                }
                answer(x, 200, list.append(']').toString());
            } else if (method.equals("POST") && path.endsWith("/reactions")) {
                answer(x, 201, "{\"id\":1,\"content\":\"eyes\"}");
            } else if (path.startsWith(repo + "/issues/") && path.contains("/labels")) {
                answer(x, 200, "[]");
            } else if (method.equals("GET") && path.matches(Pattern.quote(repo) + "/collaborators/[^/]+/permission")) {
                String login = path.replaceAll(".*/collaborators/([^/]+)/permission", "$1");
                answer(x, 200, "{\"permission\":\"read\",\"user\":{\"login\":" + json(login) + "}}");
            } else if (method.equals("GET") && path.equals("/app/hook/deliveries")) {
                answer(x, 200, "[]");
            } else {
                if (!path.startsWith(repo + "/contents/")) { // a missing config file is GitHub's 404 too
                    unknown.merge(method + " " + path, 1, Integer::sum);
                }
                answer(x, 404, "{\"message\":\"Not Found\"}");
            }
        }

        static String commentJson(long id, String text) {
            return "{\"id\":" + id + ",\"body\":" + json(text) + ",\"user\":{\"login\":\"agentx-clarify[bot]\","
                    + "\"type\":\"Bot\"},\"created_at\":\"" + Instant.now().toString().replaceAll("\\.\\d+", "") + "\"}";
        }

        static void answer(HttpExchange x, int status, String json) throws IOException {
            byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
            x.getResponseHeaders().set("Content-Type", "application/json; charset=utf-8");
            x.getResponseHeaders().set("X-RateLimit-Limit", "5000");
            x.getResponseHeaders().set("X-RateLimit-Remaining", "4999");
            x.getResponseHeaders().set("X-RateLimit-Reset", String.valueOf(Instant.now().getEpochSecond() + 3600));
            x.getResponseHeaders().set("X-RateLimit-Resource", "core");
            x.sendResponseHeaders(status, bytes.length);
            x.getResponseBody().write(bytes);
            x.close();
        }
    }

    static boolean isQuestion(String commentBody) {
        return commentBody.contains("**Clarification CLR-");
    }
}
