package dev.agentx.clarify.deploy.replicas;

import static dev.agentx.clarify.deploy.replicas.Processes.exec;
import static dev.agentx.clarify.deploy.replicas.Processes.requireOk;

import dev.agentx.clarify.deploy.replicas.Processes.Run;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The check of {@code deploy/compose/compose.yaml}: it copies {@code compose.yaml} and {@code
 * nginx.conf} unchanged into a temporary folder, beside an env file, an {@code agentx.toml} and a
 * throwaway App key of its own, and adds one override: the build context (the repository) and a
 * host name for the fake GitHub, which listens on this machine. The stack runs as the compose
 * project {@code agentx-check} (its own containers and volumes, removed at the end) but publishes
 * the proxy on port 8080 as the recipe does, so a stack of the recipe itself must not be running.
 * Phases: a stop, a kill, a database outage.
 */
final class ComposeCheck extends RecipeCheck {
    static final String PROJECT = "agentx-check";
    /** Whether this run brought the stack up: only then is there anything to take down or leave. */
    private boolean started;

    ComposeCheck(List<String> options) throws IOException {
        if (!options.isEmpty()) {
            throw new IllegalArgumentException("compose takes no options but --keep: " + options);
        }
        if (!Files.isRegularFile(Path.of("deploy/compose/compose.yaml"))) {
            throw new IllegalArgumentException("run this from the repository root (deploy/compose/compose.yaml not found)");
        }
        webhook.url = "http://127.0.0.1:8080/api/github/webhooks";
    }

    @Override
    int run() throws Exception {
        Run docker = exec(List.of("docker", "compose", "version"));
        if (docker.rc() != 0) {
            throw new IllegalStateException("the compose check needs Docker with its compose plugin, and 'docker "
                    + "compose version' says: " + docker.out().trim());
        }
        int port = github.start();
        prepare(port);
        step("build and start: db, agentx-1, agentx-2, proxy");
        started = true;
        requireOk(compose("up", "--build", "--detach", "--wait", "--wait-timeout", "600"), "docker compose up");
        webhook.waitUntilServed("the proxy on port 8080");

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
        if (!started) {
            return;
        }
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

    /** The recipe's two files, unchanged, with the check's override, env file, key and agentx.toml, in {@link #work}. */
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
                "GITHUB_WEBHOOK_SECRET=" + Webhook.SECRET,
                "GITHUB_API_URL=http://github.check:" + githubPort,
                "AGENTX_LOG_FORMAT=text",
                ""));
        writeAppFiles(compose);
        System.out.println("working folder " + work + ", fake GitHub on port " + githubPort);
    }

    /** {@code docker compose} on the copied recipe and the check's override, as the project {@link #PROJECT}. */
    Run compose(String... args) {
        List<String> cmd = new ArrayList<>(List.of("docker", "compose", "-p", PROJECT,
                "-f", work.resolve("deploy/compose/compose.yaml").toString(),
                "-f", work.resolve("deploy/compose/check.yaml").toString()));
        cmd.addAll(List.of(args));
        return exec(cmd);
    }

    /** {@code s} as a YAML single-quoted scalar. */
    static String quote(String s) {
        return "'" + s.replace("'", "''") + "'";
    }
}
