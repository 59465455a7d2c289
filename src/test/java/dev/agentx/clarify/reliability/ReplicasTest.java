package dev.agentx.clarify.reliability;

import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import dev.agentx.clarify.cli.Main;
import dev.agentx.clarify.github.GitHubSettings;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.github.support.Keys;
import dev.agentx.clarify.github.webhook.SignatureVerifier;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.store.postgres.DatabaseUrl;
import dev.agentx.clarify.store.postgres.PgDeliveryQueue;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import dev.agentx.clarify.support.FreePorts;
import dev.agentx.clarify.support.Jvm;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.ProcessLog;
import dev.agentx.clarify.support.TestPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two real {@code agentx serve} processes, each with its own data folder, on one PostgreSQL
 * database, as two replicas behind a load balancer: GitHub's deliveries are spread over both and
 * each is also redelivered to the other. Every command is applied once and every comment is
 * posted once, in order; also when one replica is killed (SIGKILL) during a burst and restarted.
 */
@Tag("postgres")
class ReplicasTest {
    private static final Duration DEADLINE = Duration.ofSeconds(90);
    private static final Pattern TAG = Pattern.compile("<!-- agentx-effect:[0-9a-f]+ -->");

    @TempDir
    Path dir;

    /** One replica: its process, data folder and log. */
    private final class Replica {
        final String name;
        final Path data;
        final GitHubRig rig;
        final String databaseUrl;
        Process process;
        Path log;
        int port;
        int starts;

        /** Not a server: the address of a proxy in front of the replicas, to deliver through. */
        Replica(String name, GitHubRig rig, String databaseUrl, int port) {
            this.name = name;
            this.rig = rig;
            this.databaseUrl = databaseUrl;
            this.data = null;
            this.port = port;
        }

        Replica(String name, GitHubRig rig, String databaseUrl) throws IOException {
            this.name = name;
            this.rig = rig;
            this.databaseUrl = databaseUrl;
            this.data = dir.resolve("data-" + name);
            Files.createDirectories(data);
            Files.copy(rig.data.resolve("agentx.toml"), data.resolve("agentx.toml"));
        }

        void start() throws Exception {
            log = dir.resolve("serve-" + name + "-" + (++starts) + ".log");
            ProcessBuilder pb = Jvm.builder(Main.class, "serve");
            Map<String, String> env = pb.environment();
            env.remove("JAVA_TOOL_OPTIONS");
            env.remove("AGENTX_LOG_FORMAT");
            env.put("GITHUB_APP_ID", String.valueOf(GitHubRig.APP_ID));
            env.put("GITHUB_APP_PRIVATE_KEY", Keys.pkcs8Pem());
            env.put("GITHUB_WEBHOOK_SECRET", GitHubRig.SECRET);
            env.put("GITHUB_API_URL", rig.wiremock.baseUrl());
            env.put("AGENTX_DATA_DIR", data.toString());
            env.put("AGENTX_DATABASE_URL", databaseUrl);
            env.put("PORT", "0");
            env.put("AGENTX_MANAGEMENT_PORT", "0");
            env.put("AGENTX_REDELIVERY_INTERVAL", "0");
            process = pb.redirectErrorStream(true).redirectOutput(log.toFile()).start();
            port = ProcessLog.serverPort(process, log, DEADLINE);
        }

        /** Sends the delivery; its status, or -1 when the replica did not answer (killed). */
        int deliver(String id, byte[] body) {
            try {
                return rig.request("POST", port, GitHubSettings.DEFAULT_PATH, body, Map.of("Content-Type",
                        "application/json", "X-GitHub-Event", "issue_comment", "X-GitHub-Delivery", id,
                        "X-Hub-Signature-256", SignatureVerifier.sign(GitHubRig.SECRET, body))).status();
            } catch (RuntimeException e) {
                return -1;
            }
        }

        boolean idle() {
            try {
                String health = rig.request("GET", port, "/healthz", null, Map.of()).body();
                return health.contains("\"pendingDeliveries\":0") && health.contains("\"pendingEffects\":0");
            } catch (RuntimeException e) {
                return false;
            }
        }

        void kill() throws InterruptedException {
            process.toHandle().destroyForcibly();
            assertTrue(process.waitFor(DEADLINE.toSeconds(), TimeUnit.SECONDS));
        }

        void stop() throws InterruptedException {
            if (process != null && process.isAlive()) {
                process.destroy();
                if (!process.waitFor(DEADLINE.toSeconds(), TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            }
        }

        String logs() {
            StringBuilder all = new StringBuilder();
            for (int i = 1; i <= starts; i++) {
                all.append(read(dir.resolve("serve-" + name + "-" + i + ".log")));
            }
            return all.toString();
        }
    }

    @Test
    void deliveriesSpreadOverTwoReplicasAndRedeliveredToTheOtherAreAppliedAndPostedOnce() throws Exception {
        int issues = 12;
        try (GitHubRig rig = new GitHubRig(dir.resolve("rig"), MutableClock.at(Instant.now().toString()))) {
            String url = TestPostgres.newDatabase().url();
            String logs = withTwoReplicas(rig, url, (a, b) -> {
                List<Replica> both = List.of(a, b);
                // the asks, each to one replica and at once again to the other (GitHub's redelivery)
                for (int issue = 1; issue <= issues; issue++) {
                    byte[] body = rig.bytes(rig.comment("eng", issue, "/clarify @architect Question " + issue + "?"));
                    Replica first = both.get(issue % 2);
                    Replica second = both.get((issue + 1) % 2);
                    assertEquals(202, first.deliver("ask-" + issue, body));
                    assertEquals(200, second.deliver("ask-" + issue, body), "acknowledged already, by the other");
                }
                await("both replicas to be idle", () -> a.idle() && b.idle());
                // the answers come once the questions are on GitHub, as people and agents answer what they read
                for (int issue = 1; issue <= issues; issue++) {
                    byte[] body = rig.bytes(rig.comment("arch", issue, "/clarify answer Answer " + issue + "."));
                    Replica first = both.get((issue + 1) % 2);
                    Replica second = both.get(issue % 2);
                    assertEquals(202, first.deliver("answer-" + issue, body));
                    assertEquals(200, second.deliver("answer-" + issue, body), "acknowledged already, by the other");
                }
                await("both replicas to be idle", () -> a.idle() && b.idle());
            });
            assertEquals(2 * issues, count(logs, "was received before; not processed again"), logs);
            assertAppliedOnceAndPostedOnceInOrder(rig, url, issues, true, logs);
        }
    }

    /**
     * Each issue's question goes to one replica and its answer, right after, to the other: the
     * answer waits in its line until the question, held by the other replica, is applied, so
     * every answer finds its question (applied first, it would be refused: nothing to answer).
     */
    @Test
    void anIssuesDeliveriesSentToTwoReplicasAtOnceAreAppliedInTheOrderReceived() throws Exception {
        int issues = 12;
        try (GitHubRig rig = new GitHubRig(dir.resolve("rig"), MutableClock.at(Instant.now().toString()))) {
            String url = TestPostgres.newDatabase().url();
            String logs = withTwoReplicas(rig, url, (a, b) -> {
                List<Replica> both = List.of(a, b);
                for (int issue = 1; issue <= issues; issue++) {
                    Replica first = both.get(issue % 2);
                    Replica second = both.get((issue + 1) % 2);
                    assertEquals(202, first.deliver("ask-" + issue, rig.bytes(rig.comment("eng", issue,
                            "/clarify @architect Question " + issue + "?"))));
                    assertEquals(202, second.deliver("answer-" + issue, rig.bytes(rig.comment("arch", issue,
                            "/clarify answer Answer " + issue + "."))));
                }
                await("both replicas to be idle", () -> a.idle() && b.idle());
            });
            assertAppliedOnceAndPostedOnceInOrder(rig, url, issues, true, logs);
        }
    }

    @Test
    void aReplicaKilledDuringABurstLosesAndDoublesNothingAfterItsRestart() throws Exception {
        int issues = 30;
        try (GitHubRig rig = new GitHubRig(dir.resolve("rig"), MutableClock.at(Instant.now().toString()))) {
            String url = TestPostgres.newDatabase().url();
            List<Integer> acknowledged = new ArrayList<>();
            String logs = withTwoReplicas(rig, url, (a, b) -> {
                List<Replica> both = List.of(a, b);
                for (int issue = 1; issue <= issues; issue++) {
                    if (issue == issues / 2) {
                        a.kill(); // SIGKILL in the middle of the burst, with deliveries and effects under way
                    }
                    byte[] body = rig.bytes(rig.comment("eng", issue, "/clarify @architect Question " + issue + "?"));
                    Replica first = both.get(issue % 2);
                    Replica second = both.get((issue + 1) % 2);
                    boolean acked = first.deliver("ask-" + issue, body) == 202;
                    acked |= second.deliver("ask-" + issue, body) == 202; // 200 if the first acknowledged it
                    if (acked) {
                        acknowledged.add(issue);
                    }
                }
                // GitHub lists the comments that were posted, those whose POST the kill cut short too
                listPostedComments(rig, issues);
                a.start(); // the same data folder: the same replica, with what it had acknowledged
                await("both replicas to be idle", () -> a.idle() && b.idle());
            });
            assertEquals(issues, acknowledged.size(), "B was up all along: every ask was acknowledged by one");
            assertAppliedOnceAndPostedOnceInOrder(rig, url, issues, false, logs);
        }
    }

    /**
     * A replica killed (SIGKILL) with deliveries it acknowledged and had not processed yet, and
     * never started again (its volume lost, the node gone): once its heartbeat is older than
     * {@link PgDeliveryQueue#GONE_AFTER}, the other replica takes those deliveries over, and every
     * question is applied once and posted once. (A comment the killed replica had claimed and not
     * posted is taken over too: GitHubModeOnPostgresTest.)
     */
    @Test
    void whatAReplicaThatNeverComesBackAcknowledgedIsDoneByTheOther() throws Exception {
        int issues = 16;
        try (GitHubRig rig = new GitHubRig(dir.resolve("rig"), MutableClock.at(Instant.now().toString()))) {
            String url = TestPostgres.newDatabase().url();
            String logs = withTwoReplicas(rig, url, (a, b) -> {
                rig.wiremock.setGlobalFixedDelay(400); // GitHub slow: a acknowledges far faster than it works
                for (int issue = 1; issue <= issues; issue++) {
                    byte[] body = rig.bytes(rig.comment("eng", issue, "/clarify @architect Question " + issue + "?"));
                    assertEquals(202, a.deliver("ask-" + issue, body));
                }
                a.kill();
                rig.wiremock.setGlobalFixedDelay(0);
                // GitHub lists the comments that were posted, those whose POST the kill cut short too
                listPostedComments(rig, issues);
                assertTrue(queuedIn(url) > 0, "the kill left acknowledged deliveries unprocessed");
                await("b to take over and do what a left",
                        () -> queuedIn(url) == 0 && unsentClaimsIn(url) == 0 && b.idle());
            });
            assertTrue(logs.contains("left by replicas that are gone"), logs);
            assertAppliedOnceAndPostedOnceInOrder(rig, url, issues, false, logs);
        }
    }

    /**
     * The proxy of deploy/compose (its nginx.conf, with the replicas' and its own addresses put in)
     * in front of two replicas; one replica stops (SIGTERM) in the middle of the deliveries: every
     * delivery is still acknowledged, the stopping replica's 503s and refused connections passed on
     * to the other, and after the stopped one is started again every command is applied once.
     */
    @Test
    void throughTheComposeRecipesProxyDeliveriesGoOnWhileAReplicaStops() throws Exception {
        Path nginx = Path.of("/usr/sbin/nginx");
        if (!Files.isExecutable(nginx) && "true".equals(System.getenv("CI"))) {
            throw new IllegalStateException("the proxy test needs Debian's nginx-light (apt-get install nginx-light); "
                    + ".ci/run installs it");
        }
        Assumptions.assumeTrue(Files.isExecutable(nginx), "nginx is not installed: apt-get install nginx-light");
        int issues = 40;
        try (GitHubRig rig = new GitHubRig(dir.resolve("rig"), MutableClock.at(Instant.now().toString()))) {
            String url = TestPostgres.newDatabase().url();
            Replica a = new Replica("a", rig, url);
            Replica b = new Replica("b", rig, url);
            Process proxy = null;
            try {
                a.start();
                b.start();
                int port = FreePorts.next();
                Path prefix = Files.createDirectories(dir.resolve("nginx"));
                Files.createDirectories(prefix.resolve("logs"));
                String conf = Files.readString(Path.of("deploy", "compose", "nginx.conf"))
                        // fixed addresses instead of Docker's DNS names: nothing to look up again (and
                        // Debian's nginx predates the upstream's resolve parameter)
                        .replace("server agentx-1:3000 resolve", "server 127.0.0.1:" + a.port)
                        .replace("server agentx-2:3000 resolve", "server 127.0.0.1:" + b.port)
                        .replace("listen 8080;", "listen 127.0.0.1:" + port + ";");
                assertTrue(conf.contains("127.0.0.1:" + a.port) && conf.contains("listen 127.0.0.1:"), conf);
                Files.writeString(prefix.resolve("nginx.conf"), conf);
                proxy = new ProcessBuilder(nginx.toString(), "-p", prefix.toString(), "-c",
                        prefix.resolve("nginx.conf").toString(), "-g", "daemon off; pid " + prefix.resolve("nginx.pid")
                        + "; error_log " + prefix.resolve("logs/error.log") + ";").redirectErrorStream(true)
                        .redirectOutput(prefix.resolve("nginx.out").toFile()).start();
                Replica viaProxy = new Replica("proxy", rig, url, port);
                await("the proxy to answer", () -> viaProxy.deliver("probe", new byte[0]) > 0); // any answer
                for (int issue = 1; issue <= issues; issue++) {
                    if (issue == issues / 2) {
                        a.process.destroy(); // SIGTERM: it stops taking webhooks, finishes what it started, exits
                    }
                    byte[] body = rig.bytes(rig.comment("eng", issue, "/clarify @architect Question " + issue + "?"));
                    assertEquals(202, viaProxy.deliver("ask-" + issue, body), "delivery " + issue
                            + " through the proxy\n" + read(prefix.resolve("logs/error.log")));
                }
                assertTrue(a.process.waitFor(DEADLINE.toSeconds(), TimeUnit.SECONDS), "replica a stopped");
                a.start(); // what it had acknowledged and not yet processed waits in its inbox
                await("both replicas to be idle", () -> a.idle() && b.idle());
            } finally {
                if (proxy != null) {
                    proxy.destroy();
                    proxy.waitFor(DEADLINE.toSeconds(), TimeUnit.SECONDS);
                }
                a.stop();
                b.stop();
            }
            assertAppliedOnceAndPostedOnceInOrder(rig, url, issues, false, a.logs() + b.logs());
        }
    }

    /** What runs while replicas a and b serve one GitHub from one database. */
    @FunctionalInterface
    private interface WhileRunning {
        void run(Replica a, Replica b) throws Exception;
    }

    /** Starts replicas a and b on the database at {@code url}, runs {@code work}, stops both however it ends; their logs. */
    private String withTwoReplicas(GitHubRig rig, String url, WhileRunning work) throws Exception {
        Replica a = new Replica("a", rig, url);
        Replica b = new Replica("b", rig, url);
        try {
            a.start();
            b.start();
            work.run(a, b);
        } finally {
            a.stop();
            b.stop();
        }
        return a.logs() + b.logs();
    }

    /**
     * Each issue's ledger has one clarification (with its answer when {@code answered}), every
     * comment was posted once (no tag twice), and each issue's question was posted once, before
     * its answer.
     */
    private static void assertAppliedOnceAndPostedOnceInOrder(GitHubRig rig, String url, int issues, boolean answered,
                                                             String logs) {
        try (PostgresDatabase db = PostgresDatabase.open(DatabaseUrl.parse(url, Map.of()), 1)) {
            for (int issue = 1; issue <= issues; issue++) {
                Ledger ledger = db.repository(GitHubRig.REPO.stateKey()).ledgers().read(issue).orElseThrow(
                        () -> new AssertionError("no ledger"));
                assertEquals(1, ledger.clarifications().size(), "one clarification on #" + ledger.issueNumber());
                assertEquals(answered ? 2 : 1, ledger.clarifications().get(0).thread().size(),
                        "the thread of #" + ledger.issueNumber());
            }
        }
        List<LoggedRequest> posts = rig.requests("POST", GitHubRig.API_REPO + "/issues/\\d+/comments");
        Map<String, Integer> tags = new HashMap<>();
        for (LoggedRequest p : posts) {
            Matcher m = TAG.matcher(p.getBodyAsString());
            assertTrue(m.find(), "every comment carries its tag: " + p.getBodyAsString());
            tags.merge(m.group(), 1, Integer::sum);
        }
        tags.forEach((tag, n) -> assertEquals(1, n, "comment " + tag + " posted " + n + " times\n" + logs));
        Pattern kind = Pattern.compile("\"kind\":\"([a-z-]+)\"");
        for (int issue = 1; issue <= issues; issue++) {
            List<String> kinds = new ArrayList<>();
            for (String comment : rig.comments(issue)) {
                Matcher m = kind.matcher(comment);
                kinds.add(m.find() ? m.group(1) : comment);
            }
            assertEquals(answered ? List.of("question", "answer") : List.of("question"), kinds,
                    "the comments of #" + issue + ", in the order posted");
        }
    }

    /** GET of each issue's comments answers with the comments POSTed to it so far, in GitHub's shape. */
    private static void listPostedComments(GitHubRig rig, int issues) throws IOException {
        int id = 801;
        for (int issue = 1; issue <= issues; issue++) {
            ArrayNode list = rig.json.createArrayNode();
            for (LoggedRequest p : rig.requests("POST", GitHubRig.API_REPO + "/issues/" + issue + "/comments")) {
                ObjectNode c = ((ObjectNode) rig.fixture("issue_comment.created.with-installation").get("comment"))
                        .deepCopy();
                c.put("id", id++);
                c.put("body", rig.json.readTree(p.getBodyAsString()).path("body").asText());
                ((ObjectNode) c.get("user")).put("login", "agentx-clarify[bot]").put("type", "Bot");
                list.add(c);
            }
            rig.wiremock.stubFor(get(urlPathEqualTo(GitHubRig.API_REPO + "/issues/" + issue + "/comments"))
                    .atPriority(1).willReturn(okJson(list.toString())));
        }
    }

    /** Deliveries queued in the database, whichever replica holds them. */
    private static int queuedIn(String url) {
        try (PostgresDatabase db = PostgresDatabase.open(DatabaseUrl.parse(url, Map.of()), 1)) {
            return (int) db.deliveries("test", java.time.Clock.systemUTC()).recent(Integer.MAX_VALUE).rows().stream()
                    .filter(r -> r.state().equals("queued")).count();
        }
    }

    /** Effects some replica claimed and has not sent yet (their claims not marked done). */
    private static int unsentClaimsIn(String url) {
        try (PostgresDatabase db = PostgresDatabase.open(DatabaseUrl.parse(url, Map.of()), 1)) {
            return db.autoCommit(c -> {
                try (var s = c.prepareStatement("SELECT count(*) FROM effect_claims WHERE NOT done");
                     var r = s.executeQuery()) {
                    r.next();
                    return r.getInt(1);
                }
            });
        }
    }

    private static int count(String text, String part) {
        int n = 0;
        for (int i = text.indexOf(part); i >= 0; i = text.indexOf(part, i + 1)) {
            n++;
        }
        return n;
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        ProcessLog.until(what, condition, DEADLINE);
    }

    private static String read(Path file) {
        return ProcessLog.read(file);
    }
}
