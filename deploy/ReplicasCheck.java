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
 * Runs a replicas recipe as it is, with a fake GitHub, and checks what it promises: deliveries
 * spread over both replicas, none lost and none handled twice while a replica goes away and comes
 * back. From the repository root, with the JDK alone (no Maven, no project classes):
 *
 * <pre>
 *   java deploy/ReplicasCheck.java compose                     # compose/compose.yaml, with Docker
 *   java deploy/ReplicasCheck.java kubernetes --database-url postgresql://...   # kubernetes/agentx-replicas.yaml
 *   ... --keep                                                 # leaves it running to look at afterwards
 *                                                              # (as a failed check does)
 * </pre>
 *
 * <p>{@code compose} copies {@code compose.yaml} and {@code nginx.conf} unchanged into a temporary
 * folder, beside an env file, an {@code agentx.toml} and a throwaway App key of its own, and adds
 * one override: the build context (the repository) and a host name for the fake GitHub, which
 * listens on this machine. The stack runs as the compose project {@code agentx-check} (its own
 * containers and volumes, removed at the end) but publishes the proxy on port 8080 as the recipe
 * does, so a stack of the recipe itself must not be running. Phases: a stop, a kill, a database
 * outage.
 *
 * <p>{@code kubernetes} applies {@code agentx-replicas.yaml} with {@code kubectl} (its current
 * context) into a namespace of its own, {@code agentx-check} (deleted at the end), after creating
 * the Secrets and the ConfigMap the way the manifest's comment says; the one change to the manifest
 * is {@code GITHUB_API_URL}, pointed at the fake GitHub. It needs a cluster whose nodes have the
 * image {@code agentx-clarify:latest} (built from the Dockerfile and loaded into the cluster), a
 * default StorageClass for the two volumes, and a PostgreSQL database the pods can reach, for the
 * check only ({@code --database-url}, stored in the Secret {@code agentx-database}). Run it on a node of the
 * cluster: deliveries go to the Service's cluster IP and the pods reach the fake GitHub at the
 * node's address ({@code --webhook-url} and {@code --github-host} say otherwise). Phases: an
 * eviction under the PodDisruptionBudget, a rolling update, a replica's JVM killed.
 */
public final class ReplicasCheck {
    static final String SECRET = "replicas-check-secret";

    public static void main(String[] args) throws Exception {
        // each delivery on a connection of its own, as GitHub sends them: a Service balances
        // connections, not requests, so a kept-alive one would take every delivery to one replica
        System.setProperty("jdk.httpclient.allowRestrictedHeaders", "connection");
        List<String> options = new ArrayList<>(List.of(args));
        boolean keep = options.remove("--keep");
        String target = options.isEmpty() ? "" : options.remove(0);
        Check check;
        try {
            check = switch (target) {
                case "compose" -> new ComposeCheck(options);
                case "kubernetes" -> new KubernetesCheck(options);
                default -> throw new IllegalArgumentException("say which recipe: compose or kubernetes");
            };
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.err.println("usage: java deploy/ReplicasCheck.java compose [--keep]");
            System.err.println("       java deploy/ReplicasCheck.java kubernetes --database-url URL [--keep]"
                    + " [--namespace NAME] [--github-host HOST] [--webhook-url URL]");
            System.exit(2);
            return;
        }
        int rc = 1;
        try {
            rc = check.run();
        } finally {
            check.cleanUp(keep || rc != 0); // a failed check leaves everything up to be looked at
            check.github.stop();
        }
        System.exit(rc);
    }

    /** What both recipes' checks share: the fake GitHub, the deliveries and the verdict. */
    abstract static class Check {
        /** Names this run's deliveries and repository, so a second run on one database starts afresh. */
        final String run = String.format("%08x", java.util.concurrent.ThreadLocalRandom.current().nextInt());
        final String repo = "acme/check-" + run;
        final Path work;
        final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5)).build();
        final FakeGitHub github = new FakeGitHub(repo);
        final List<String> problems = new ArrayList<>();
        final Map<Integer, String> sent = new TreeMap<>(); // issue -> delivery id
        final Map<Integer, Integer> lastStatus = new ConcurrentHashMap<>();
        String webhook;

        Check() throws IOException {
            this.work = Files.createTempDirectory("agentx-replicas-check");
        }

        abstract int run() throws Exception;

        abstract void cleanUp(boolean keep);

        /** A throwaway App key and an agentx.toml with two roles, in {@code dir}. */
        void writeAppFiles(Path dir) throws Exception {
            Files.createDirectories(dir);
            Files.writeString(dir.resolve("agentx.toml"), String.join("\n",
                    "[roles]", "architect = [\"arch\"]", "engineer = [\"eng\"]", ""));
            KeyPairGenerator rsa = KeyPairGenerator.getInstance("RSA");
            rsa.initialize(2048);
            String pem = "-----BEGIN PRIVATE KEY-----\n"
                    + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                            .encodeToString(rsa.generateKeyPair().getPrivate().getEncoded())
                    + "\n-----END PRIVATE KEY-----\n";
            Path key = dir.resolve("app.pem");
            Files.writeString(key, pem);
            // a throwaway key, readable by the image's user (uid 10001) whoever runs the check
            Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-r--r--"));
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
            long start = System.nanoTime();
            var pool = Executors.newFixedThreadPool(16);
            try {
                List<java.util.concurrent.Future<?>> pending = new ArrayList<>();
                for (int i = 0; i < count; i++) {
                    int issue = first + i;
                    String id = "check-" + run + "-" + issue;
                    sent.put(issue, id);
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

        /**
         * What was answered in a phase. 202 is acknowledged, and so is 200: a copy passed on after
         * the first replica took it and went away before answering. Anything else GitHub records as
         * failed and sends again (the recovery pass): so does the check, until each is acknowledged.
         * A replica going away may cost a delivery that; an acknowledged one is never lost.
         */
        void refusedAndRedelivered(String phase, Map<String, Integer> answers, int first, int count) {
            List<Integer> refused = new ArrayList<>();
            for (int issue = first; issue < first + count; issue++) {
                int status = lastStatus.getOrDefault(issue, -1);
                if (status != 202 && status != 200) {
                    refused.add(issue);
                }
            }
            System.out.printf("  answered %s; %d not acknowledged, sent again as GitHub's redelivery would%n",
                    answers, refused.size());
            List<Integer> left = new ArrayList<>(refused);
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
                problems.add(phase + ": " + left.size()
                        + " deliveries still not acknowledged after 2 minutes of redelivery");
            }
        }

        void expectAllAcknowledged(String phase, Map<String, Integer> answers) {
            System.out.printf("  answered %s%n", answers);
            if (!answers.keySet().equals(java.util.Set.of("202"))) {
                problems.add(phase + ": expected every delivery acknowledged (202), got " + answers);
            }
        }

        /** Every delivery sent again: each must be answered as a duplicate. */
        void redeliverAll() {
            step("every delivery sent again: each answered as a duplicate");
            Map<String, Integer> again = new TreeMap<>();
            for (Map.Entry<Integer, String> e : sent.entrySet()) {
                again.merge(String.valueOf(deliver(e.getValue(), e.getKey())), 1, Integer::sum);
            }
            System.out.printf("  answered %s%n", again);
            if (!again.keySet().equals(java.util.Set.of("200"))) {
                problems.add("redelivery: expected only 200 (duplicate), got " + again);
            }
        }

        /** A signed {@code issue_comment} delivery as GitHub sends it; the HTTP status, or -1 when none came. */
        int deliver(String id, int issue) {
            String text = "/clarify @architect Which auth method for issue " + issue + "?";
            String[] ownerName = repo.split("/");
            String body = "{\"action\":\"created\","
                    + "\"issue\":{\"number\":" + issue + ",\"title\":\"Check " + issue + "\",\"state\":\"open\","
                    + "\"labels\":[],\"user\":{\"login\":\"eng\",\"id\":2,\"type\":\"User\"},\"body\":\"\"},"
                    + "\"comment\":{\"id\":" + (100_000 + issue) + ",\"body\":" + json(text) + ","
                    + "\"user\":{\"login\":\"eng\",\"id\":2,\"type\":\"User\"},\"author_association\":\"MEMBER\"},"
                    + "\"repository\":{\"id\":10,\"name\":" + json(ownerName[1]) + ",\"full_name\":" + json(repo) + ","
                    + "\"owner\":{\"login\":" + json(ownerName[0]) + ",\"id\":1,\"type\":\"Organization\"},\"private\":true},"
                    + "\"sender\":{\"login\":\"eng\",\"id\":2,\"type\":\"User\"},\"installation\":{\"id\":1}}";
            return post(id, "issue_comment", body);
        }

        int post(String id, String event, String body) {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            try {
                HttpRequest request = HttpRequest.newBuilder(URI.create(webhook))
                        .timeout(Duration.ofSeconds(15))
                        .header("Content-Type", "application/json")
                        .header("Connection", "close")
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

        /** Waits until a ping through {@link #webhook} reaches a replica. */
        void waitForWebhook(String through) {
            Instant giveUp = Instant.now().plusSeconds(120);
            while (Instant.now().isBefore(giveUp)) {
                int status = post("check-ping-" + System.nanoTime(), "ping",
                        "{\"zen\":\"Keep it logically awesome.\",\"hook_id\":1}");
                if (status == 200 || status == 202) {
                    return;
                }
                sleep(1_000);
            }
            throw new IllegalStateException(through + " did not pass a ping to a replica within 2 minutes ("
                    + webhook + ")");
        }

        /**
         * Waits for a comment on every issue asked on, then a little longer for any second one. A
         * delivery whose processing failed while the database was away is tried again after 10 s,
         * 20 s, 40 s and so on: five minutes covers the outage's retries.
         */
        void settleComments() {
            step("comments on the fake GitHub: one per question, none twice");
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

        /** Each replica's log shows it acknowledged some of this run's questions. */
        void expectSpread(String one, String logOfOne, String other, String logOfOther) {
            String queued = "delivery check-" + run + "-\\d+ \\(issue_comment\\) queued";
            long byOne = count(logOfOne, queued);
            long byOther = count(logOfOther, queued);
            System.out.printf("  acknowledged by %s: %d, by %s: %d%n", one, byOne, other, byOther);
            if (byOne == 0 || byOther == 0) {
                problems.add("spread: one replica received no delivery (" + byOne + " / " + byOther + ")");
            }
        }

        int verdict(String ok) {
            if (problems.isEmpty()) {
                System.out.println("\nOK: " + ok);
                return 0;
            }
            System.out.println("\nFAILED:");
            problems.forEach(p -> System.out.println("  - " + p));
            return 1;
        }
    }

    // --- docker compose: compose/compose.yaml ----------------------------------------------

    static final class ComposeCheck extends Check {
        static final String PROJECT = "agentx-check";

        ComposeCheck(List<String> options) throws IOException {
            if (!options.isEmpty()) {
                throw new IllegalArgumentException("compose takes no options but --keep: " + options);
            }
            if (!Files.isRegularFile(Path.of("deploy/compose/compose.yaml"))) {
                throw new IllegalArgumentException("run this from the repository root (deploy/compose/compose.yaml not found)");
            }
            webhook = "http://127.0.0.1:8080/api/github/webhooks";
        }

        @Override
        int run() throws Exception {
            int port = github.start();
            prepare(port);
            step("build and start: db, agentx-1, agentx-2, proxy");
            requireOk(compose("up", "--build", "--detach", "--wait", "--wait-timeout", "600"), "docker compose up");
            waitForWebhook("the proxy on port 8080");

            step("40 deliveries at 20/s, spread over both replicas");
            Map<String, Integer> spread = burst(1, 40, null);
            expectAllAcknowledged("spread", spread);
            expectSpread("agentx-1", compose("logs", "--no-log-prefix", "agentx-1").out(),
                    "agentx-2", compose("logs", "--no-log-prefix", "agentx-2").out());

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

            redeliverAll();
            settleComments();
            List<String> proxyErrors = compose("logs", "--no-log-prefix", "proxy").out().lines()
                    .filter(l -> l.contains("[error]")).toList();
            System.out.println("\nthe proxy logged " + proxyErrors.size() + " errors (a replica stopped, killed or "
                    + "refusing while the database was away)");
            if (!problems.isEmpty()) {
                proxyErrors.stream().filter(l -> !l.contains("could not be resolved")).limit(20)
                        .forEach(l -> System.out.println("  " + l));
            }
            return verdict("every delivery acknowledged was handled once, across a stop, a kill and a database outage.");
        }

        @Override
        void cleanUp(boolean keep) {
            if (!keep) {
                compose("down", "-v", "--remove-orphans");
            } else {
                System.out.println("left running: docker compose -p " + PROJECT + " -f "
                        + work.resolve("deploy/compose/compose.yaml") + " -f "
                        + work.resolve("deploy/compose/check.yaml") + " down -v  (to remove it)");
            }
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
            writeAppFiles(compose);
            System.out.println("working folder " + work + ", fake GitHub on port " + githubPort);
        }

        Run compose(String... args) {
            List<String> cmd = new ArrayList<>(List.of("docker", "compose", "-p", PROJECT,
                    "-f", work.resolve("deploy/compose/compose.yaml").toString(),
                    "-f", work.resolve("deploy/compose/check.yaml").toString()));
            cmd.addAll(List.of(args));
            return exec(cmd);
        }
    }

    // --- Kubernetes: kubernetes/agentx-replicas.yaml ----------------------------------------

    static final class KubernetesCheck extends Check {
        static final String SET = "agentx-clarify";
        static final String API_LINE = "value: https://api.github.com";
        final String databaseUrl;
        String namespace = "agentx-check";
        String githubHost;
        /** Whether this run made the namespace: only then is it this run's to leave or delete. */
        boolean created;

        KubernetesCheck(List<String> options) throws IOException {
            String database = null;
            for (int i = 0; i < options.size(); i++) {
                String name = options.get(i);
                if (i + 1 >= options.size() || !name.startsWith("--")) {
                    throw new IllegalArgumentException("unknown or incomplete option: " + name);
                }
                String value = options.get(++i);
                switch (name) {
                    case "--database-url" -> database = value;
                    case "--namespace" -> namespace = value;
                    case "--github-host" -> githubHost = value;
                    case "--webhook-url" -> webhook = value;
                    default -> throw new IllegalArgumentException("unknown option: " + name);
                }
            }
            if (database == null) {
                throw new IllegalArgumentException("kubernetes needs --database-url: a PostgreSQL database for the"
                        + " check that the pods can reach (postgresql://user:password@host:5432/db)");
            }
            if (!Files.isRegularFile(Path.of("deploy/kubernetes/agentx-replicas.yaml"))) {
                throw new IllegalArgumentException(
                        "run this from the repository root (deploy/kubernetes/agentx-replicas.yaml not found)");
            }
            this.databaseUrl = database;
        }

        @Override
        int run() throws Exception {
            Run context = kubectl("config", "current-context");
            requireOk(context, "kubectl config current-context");
            if (kubectl("get", "namespace", namespace).rc() == 0) {
                throw new IllegalStateException("the namespace " + namespace + " exists: delete it (kubectl delete"
                        + " namespace " + namespace + ") or pass --namespace");
            }
            if (githubHost == null) {
                githubHost = requireOk(kubectl("get", "nodes", "-o",
                        "jsonpath={.items[0].status.addresses[?(@.type==\"InternalIP\")].address}"), "the node's address")
                        .out().trim();
            }
            int port = github.start();
            Path manifest = prepare("http://" + githubHost + ":" + port);
            System.out.println("context " + context.out().trim() + ", namespace " + namespace + ", working folder "
                    + work + ", fake GitHub at " + githubHost + ":" + port);

            step("Secrets, ConfigMap and agentx-replicas.yaml applied; waiting for both replicas");
            requireOk(kubectl("create", "namespace", namespace), "create the namespace");
            created = true;
            Path files = work.resolve("app");
            requireOk(kubectlIn("create", "secret", "generic", "agentx-github", "--from-literal=app-id=1",
                    "--from-literal=webhook-secret=" + SECRET, "--from-file=private-key.pem=" + files.resolve("app.pem")),
                    "create the Secret agentx-github");
            requireOk(kubectlIn("create", "configmap", "agentx-config", "--from-file=" + files.resolve("agentx.toml")),
                    "create the ConfigMap agentx-config");
            requireOk(kubectlIn("create", "secret", "generic", "agentx-database", "--from-literal=url=" + databaseUrl),
                    "create the Secret agentx-database");
            requireOk(kubectlIn("apply", "-f", manifest.toString()), "kubectl apply");
            bothReady("start");
            if (webhook == null) {
                String ip = requireOk(kubectlIn("get", "service", SET, "-o", "jsonpath={.spec.clusterIP}"),
                        "the Service's address").out().trim();
                webhook = "http://" + ip + ":3000/api/github/webhooks";
            }
            waitForWebhook("the Service " + SET);

            step("40 deliveries at 20/s through the Service, spread over both replicas");
            Map<String, Integer> spread = burst(1, 40, null);
            expectAllAcknowledged("spread", spread);
            expectSpread(SET + "-0", kubectlIn("logs", SET + "-0").out(), SET + "-1", kubectlIn("logs", SET + "-1").out());

            step("200 deliveries at 20/s; after 3 s " + SET + "-0 evicted, then " + SET + "-1 (the budget refuses)");
            expectDisruptionsAllowed(1);
            List<Run> evictions = new CopyOnWriteArrayList<>();
            Map<String, Integer> evict = burst(101, 200, new Disruption(3_000, () -> {
                evictions.add(evict(SET + "-0"));
                evictions.add(evict(SET + "-1"));
            }));
            refusedAndRedelivered("eviction", evict, 101, 200);
            System.out.printf("  eviction of %s-0: %s%n  eviction of %s-1: %s%n", SET, firstLine(evictions.get(0)), SET,
                    firstLine(evictions.get(1)));
            if (evictions.get(0).rc() != 0) {
                problems.add("eviction: the first replica's eviction was refused: " + evictions.get(0).out().trim());
            }
            if (evictions.get(1).rc() == 0 || !evictions.get(1).out().contains("disruption budget")) {
                problems.add("eviction: the second replica's eviction, while the first was away, was not refused by"
                        + " the PodDisruptionBudget: " + evictions.get(1).out().trim());
            }
            bothReady("eviction");

            step("deliveries at 20/s through a rolling update (kubectl rollout restart)");
            Map<String, String> before = podUids();
            String[] rolled = new String[1];
            Map<String, Integer> rollout = burst(301, 1_200, new Disruption(3_000, () -> {
                requireOk(kubectlIn("rollout", "restart", "statefulset/" + SET), "kubectl rollout restart");
                rolled[0] = kubectlIn("rollout", "status", "statefulset/" + SET, "--timeout=300s").out().trim();
            }));
            refusedAndRedelivered("rolling update", rollout, 301, 1_200);
            bothReady("rolling update");
            Map<String, String> after = podUids();
            System.out.println("  " + (rolled[0] == null ? "" : rolled[0].lines().reduce((a, b) -> b).orElse("")));
            for (String pod : before.keySet()) {
                if (before.get(pod).equals(after.get(pod))) {
                    problems.add("rolling update: " + pod + " was not replaced");
                }
            }

            step("200 deliveries at 20/s; the JVM of " + SET + "-1 killed (SIGKILL) after 3 s, restarted in place");
            int restarts = restarts(SET + "-1");
            Map<String, Integer> kill = burst(1_601, 200, new Disruption(3_000, () ->
                    kubectlIn("exec", SET + "-1", "--", "sh", "-c", "kill -KILL -1")));
            refusedAndRedelivered("kill", kill, 1_601, 200);
            Instant giveUp = Instant.now().plusSeconds(60);
            while (restarts(SET + "-1") <= restarts && Instant.now().isBefore(giveUp)) {
                sleep(1_000);
            }
            if (restarts(SET + "-1") <= restarts) {
                problems.add("kill: the container of " + SET + "-1 did not restart after its JVM was killed");
            }
            bothReady("kill");

            redeliverAll();
            settleComments();
            return verdict("every delivery acknowledged was handled once, across an eviction, a rolling update"
                    + " and a killed JVM.");
        }

        @Override
        void cleanUp(boolean keep) {
            if (!created) {
                return;
            }
            if (keep) {
                System.out.println("left running: kubectl delete namespace " + namespace + "  (to remove it)");
            } else {
                kubectl("delete", "namespace", namespace, "--timeout=180s");
            }
        }

        /** The key and agentx.toml, and the manifest with GITHUB_API_URL pointed at the fake GitHub. */
        Path prepare(String githubUrl) throws Exception {
            writeAppFiles(work.resolve("app"));
            String manifest = Files.readString(Path.of("deploy/kubernetes/agentx-replicas.yaml"));
            if (count(manifest, Pattern.quote(API_LINE)) != 1) {
                throw new IllegalStateException("agentx-replicas.yaml should set GITHUB_API_URL once, with '"
                        + API_LINE + "'");
            }
            Path copy = work.resolve("agentx-replicas.yaml");
            Files.writeString(copy, manifest.replace(API_LINE, "value: " + githubUrl));
            return copy;
        }

        /** Waits for the StatefulSet's two pods to be ready; says why not when they are not within 5 minutes. */
        void bothReady(String phase) {
            Run status = kubectlIn("rollout", "status", "statefulset/" + SET, "--timeout=300s");
            if (status.rc() != 0) {
                System.out.println(kubectlIn("get", "pods", "-o", "wide").out());
                System.out.println(kubectlIn("describe", "pods").out().lines()
                        .dropWhile(l -> !l.startsWith("Events:")).limit(40).reduce("", (a, b) -> a + b + "\n"));
                throw new IllegalStateException(phase + ": the replicas were not ready within 5 minutes: "
                        + status.out().trim() + " (is the image agentx-clarify:latest on the nodes? a default"
                        + " StorageClass? the database reachable from the pods?)");
            }
            Instant giveUp = Instant.now().plusSeconds(120);
            while (Instant.now().isBefore(giveUp) && !"2".equals(kubectlIn("get", "statefulset", SET, "-o",
                    "jsonpath={.status.readyReplicas}").out().trim())) {
                sleep(1_000);
            }
        }

        /** The PodDisruptionBudget's status, once the controller has counted both replicas. */
        void expectDisruptionsAllowed(int expected) {
            String allowed = "";
            Instant giveUp = Instant.now().plusSeconds(60);
            while (Instant.now().isBefore(giveUp)) {
                allowed = kubectlIn("get", "pdb", SET, "-o", "jsonpath={.status.disruptionsAllowed}").out().trim();
                if (allowed.equals(String.valueOf(expected))) {
                    System.out.println("  PodDisruptionBudget: " + allowed + " disruption allowed");
                    return;
                }
                sleep(1_000);
            }
            problems.add("PodDisruptionBudget: expected " + expected + " disruption allowed, it says '" + allowed + "'");
        }

        /** Asks the API to evict a pod, as {@code kubectl drain} does: the PodDisruptionBudget may refuse. */
        Run evict(String pod) {
            try {
                Path body = Files.writeString(work.resolve("eviction-" + pod + ".json"),
                        "{\"apiVersion\":\"policy/v1\",\"kind\":\"Eviction\",\"metadata\":{\"name\":\"" + pod
                                + "\",\"namespace\":\"" + namespace + "\"}}");
                return kubectl("create", "--raw", "/api/v1/namespaces/" + namespace + "/pods/" + pod + "/eviction",
                        "-f", body.toString());
            } catch (IOException e) {
                return new Run(1, e.toString());
            }
        }

        int restarts(String pod) {
            String n = kubectlIn("get", "pod", pod, "-o", "jsonpath={.status.containerStatuses[0].restartCount}")
                    .out().trim();
            return n.matches("\\d+") ? Integer.parseInt(n) : -1;
        }

        Map<String, String> podUids() {
            Map<String, String> uids = new TreeMap<>();
            for (String line : kubectlIn("get", "pods", "-l", "app=" + SET, "-o",
                    "jsonpath={range .items[*]}{.metadata.name} {.metadata.uid}{\"\\n\"}{end}").out().split("\n")) {
                String[] parts = line.trim().split(" ");
                if (parts.length == 2) {
                    uids.put(parts[0], parts[1]);
                }
            }
            return uids;
        }

        Run kubectlIn(String... args) {
            List<String> cmd = new ArrayList<>(List.of("-n", namespace));
            cmd.addAll(List.of(args));
            return kubectl(cmd.toArray(String[]::new));
        }

        static Run kubectl(String... args) {
            List<String> cmd = new ArrayList<>(List.of("kubectl"));
            cmd.addAll(List.of(args));
            return exec(cmd);
        }

        static String firstLine(Run run) {
            String out = run.out().trim();
            return (run.rc() == 0 ? "done" : "refused") + (out.isEmpty() ? "" : ": " + out.lines().findFirst().orElse(""));
        }
    }

    // --- processes and text -----------------------------------------------------------------

    record Run(int rc, String out) {}

    static Run exec(List<String> cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            return new Run(p.waitFor(), out);
        } catch (IOException e) {
            return new Run(127, "cannot run " + cmd.get(0) + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Run(130, "interrupted");
        }
    }

    static Run requireOk(Run run, String what) {
        if (run.rc() != 0) {
            throw new IllegalStateException(what + " failed (exit " + run.rc() + "):\n" + run.out());
        }
        return run;
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
        final String repo;
        HttpServer server;

        FakeGitHub(String repo) {
            this.repo = repo;
        }

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
            String repo = "/repos/" + this.repo;
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
