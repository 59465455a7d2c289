package dev.agentx.clarify.deploy.replicas;

import static dev.agentx.clarify.deploy.replicas.Processes.exec;
import static dev.agentx.clarify.deploy.replicas.Processes.requireOk;

import dev.agentx.clarify.deploy.replicas.Processes.Run;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Pattern;

/**
 * The check of {@code deploy/kubernetes/agentx-replicas.yaml}: it applies the manifest with {@code
 * kubectl} (its current context) into a namespace of its own, {@code agentx-check} (deleted at the
 * end), after creating the Secrets and the ConfigMap the way the manifest's comment says; the one
 * change to the manifest is {@code GITHUB_API_URL}, pointed at the fake GitHub. It needs a cluster
 * whose nodes have the image {@code agentx-clarify:latest} (built from the Dockerfile and loaded
 * into the cluster), a default StorageClass for the two volumes, and a PostgreSQL database the
 * pods can reach, for the check only ({@code --database-url}, stored in the Secret {@code
 * agentx-database}). Run it on a node of the cluster: deliveries go to the Service's cluster IP and
 * the pods reach the fake GitHub at the node's address ({@code --webhook-url} and {@code
 * --github-host} say otherwise). Phases: an eviction under the PodDisruptionBudget, a rolling
 * update, a replica's JVM killed.
 */
final class KubernetesCheck extends RecipeCheck {
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
                case "--webhook-url" -> webhook.url = value;
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
                "--from-literal=webhook-secret=" + Webhook.SECRET, "--from-file=private-key.pem=" + files.resolve("app.pem")),
                "create the Secret agentx-github");
        requireOk(kubectlIn("create", "configmap", "agentx-config", "--from-file=" + files.resolve("agentx.toml")),
                "create the ConfigMap agentx-config");
        requireOk(kubectlIn("create", "secret", "generic", "agentx-database", "--from-literal=url=" + databaseUrl),
                "create the Secret agentx-database");
        requireOk(kubectlIn("apply", "-f", manifest.toString()), "kubectl apply");
        bothReady("start");
        if (webhook.url == null) {
            String ip = requireOk(kubectlIn("get", "service", SET, "-o", "jsonpath={.spec.clusterIP}"),
                    "the Service's address").out().trim();
            webhook.url = "http://" + ip + ":3000/api/github/webhooks";
        }
        webhook.waitUntilServed("the Service " + SET);

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
