package dev.agentx.clarify.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import dev.agentx.clarify.github.GitHubSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every YAML document of deploy/kubernetes/ parsed, and checked against the server: container
 * ports and their env agree with the server's defaults, probes hit the port that serves them, the
 * data volume is mounted where AGENTX_DATA_DIR points, the Service targets the webhook port by name,
 * and the Ingress routes only the webhook path to it (the management port stays inside the cluster).
 */
class KubernetesManifestTest {
    static final Path DIR = Path.of("deploy", "kubernetes");

    /** A container's probe: its kind, path and the container port it names. */
    record Probe(String kind, String path, String port) {
    }

    /** The manifests: one replica on a volume, and two replicas on PostgreSQL. */
    static final List<String> FILES = List.of("agentx.yaml", "agentx-replicas.yaml");

    @Test
    void everyManifestIsChecked() throws IOException {
        try (Stream<Path> files = Files.list(DIR)) {
            assertEquals(FILES.stream().sorted().toList(), files.map(f -> f.getFileName().toString())
                    .filter(n -> n.endsWith(".yaml")).sorted().toList());
        }
    }

    static List<JsonNode> documents(String file) throws IOException {
        List<JsonNode> docs = new ArrayList<>();
        YAMLMapper yaml = new YAMLMapper();
        try (MappingIterator<JsonNode> it = yaml.readerFor(JsonNode.class).readValues(DIR.resolve(file).toFile())) {
            while (it.hasNext()) {
                JsonNode doc = it.next();
                if (doc != null && !doc.isNull() && !doc.isEmpty()) {
                    docs.add(doc);
                }
            }
        }
        assertFalse(docs.isEmpty(), "no YAML documents in " + file);
        return docs;
    }

    /** The Deployment or StatefulSet. */
    static JsonNode workload(List<JsonNode> docs) {
        List<JsonNode> of = docs.stream().filter(d -> d.path("kind").asText().equals("Deployment")
                || d.path("kind").asText().equals("StatefulSet")).toList();
        assertEquals(1, of.size(), "one Deployment or StatefulSet");
        return of.get(0);
    }

    /** The Service the webhooks go through (not a StatefulSet's headless one). */
    static JsonNode webhookService(List<JsonNode> docs) {
        List<JsonNode> of = docs.stream().filter(d -> d.path("kind").asText().equals("Service")
                && !d.path("spec").path("clusterIP").asText().equals("None")).toList();
        assertEquals(1, of.size(), "one Service with a cluster address");
        return of.get(0);
    }

    static JsonNode only(List<JsonNode> docs, String kind) {
        List<JsonNode> of = docs.stream().filter(d -> d.path("kind").asText().equals(kind)).toList();
        assertEquals(1, of.size(), "one " + kind);
        return of.get(0);
    }

    static JsonNode container(List<JsonNode> docs) {
        JsonNode containers = workload(docs).path("spec").path("template").path("spec").path("containers");
        assertEquals(1, containers.size(), containers.toString());
        return containers.get(0);
    }

    /** The probes of the one-replica manifest. */
    static List<Probe> probes() throws IOException {
        return probes("agentx.yaml");
    }

    static List<Probe> probes(String file) throws IOException {
        JsonNode c = container(documents(file));
        List<Probe> out = new ArrayList<>();
        for (String kind : new String[] {"livenessProbe", "readinessProbe", "startupProbe"}) {
            JsonNode get = c.path(kind).path("httpGet");
            if (!get.isMissingNode()) {
                out.add(new Probe(kind, get.path("path").asText(), get.path("port").asText()));
            }
        }
        return out;
    }

    static Map<String, String> env(JsonNode container) {
        Map<String, String> out = new HashMap<>();
        for (JsonNode e : container.path("env")) {
            if (e.has("value")) {
                out.put(e.path("name").asText(), e.path("value").asText());
            }
        }
        return out;
    }

    static Map<String, Integer> ports(JsonNode container) {
        Map<String, Integer> out = new HashMap<>();
        for (JsonNode p : container.path("ports")) {
            out.put(p.path("name").asText(), p.path("containerPort").asInt());
        }
        return out;
    }

    @ParameterizedTest
    @MethodSource("files")
    void containerPortsEnvAndProbesAgreeWithTheServer(String file) throws IOException {
        List<JsonNode> docs = documents(file);
        JsonNode c = container(docs);
        Map<String, Integer> ports = ports(c);
        Map<String, String> env = env(c);
        assertEquals(GitHubSettings.DEFAULT_PORT, ports.get("http"), "the webhook port: " + ports);
        assertEquals(String.valueOf(ports.get("http")), env.get("PORT"), "PORT is the http container port");
        assertEquals(GitHubSettings.DEFAULT_MANAGEMENT_PORT, ports.get("management"),
                "a container port named management: " + ports);
        assertEquals(String.valueOf(ports.get("management")), env.get("AGENTX_MANAGEMENT_PORT"),
                "AGENTX_MANAGEMENT_PORT is the management container port");
        assertEquals(GitHubSettings.DEFAULT_PATH, env.get("AGENTX_WEBHOOK_PATH"));

        Map<String, Probe> probes = new HashMap<>();
        probes(file).forEach(p -> probes.put(p.kind(), p));
        assertEquals(new Probe("livenessProbe", "/healthz", "http"), probes.get("livenessProbe"),
                "liveness: /healthz on the port GitHub's deliveries come in on");
        assertEquals(new Probe("readinessProbe", "/readyz", "management"), probes.get("readinessProbe"),
                "readiness: /readyz, served on the management port only");

        // Prometheus finds /metrics on the management port through the pod's annotations
        JsonNode annotations = workload(docs).path("spec").path("template").path("metadata")
                .path("annotations");
        assertEquals("true", annotations.path("prometheus.io/scrape").asText(), annotations.toString());
        assertEquals(String.valueOf(ports.get("management")), annotations.path("prometheus.io/port").asText());
        assertEquals("/metrics", annotations.path("prometheus.io/path").asText());

        // the data volume is where AGENTX_DATA_DIR points, and is the PersistentVolumeClaim
        String dataDir = env.get("AGENTX_DATA_DIR");
        assertNotNull(dataDir, "AGENTX_DATA_DIR is set explicitly");
        String volume = null;
        for (JsonNode m : c.path("volumeMounts")) {
            if (m.path("mountPath").asText().equals(dataDir)) {
                volume = m.path("name").asText();
            }
        }
        assertNotNull(volume, "a volume is mounted at AGENTX_DATA_DIR " + dataDir);

        // agentx.toml (who is who) from a ConfigMap, at $AGENTX_DATA_DIR/agentx.toml, the same for every replica
        String configVolume = null;
        for (JsonNode m : c.path("volumeMounts")) {
            if (m.path("mountPath").asText().equals(dataDir + "/agentx.toml")) {
                assertEquals("agentx.toml", m.path("subPath").asText(), m.toString());
                assertTrue(m.path("readOnly").asBoolean(), m.toString());
                configVolume = m.path("name").asText();
            }
        }
        assertNotNull(configVolume, "agentx.toml is mounted into the data dir");
        boolean fromConfigMap = false;
        for (JsonNode v : workload(docs).path("spec").path("template").path("spec").path("volumes")) {
            if (v.path("name").asText().equals(configVolume)) {
                for (JsonNode item : v.path("configMap").path("items")) {
                    fromConfigMap |= item.path("key").asText().equals("agentx.toml")
                            && item.path("path").asText().equals("agentx.toml");
                }
                assertFalse(v.path("configMap").path("optional").asBoolean(), "required: an optional one "
                        + "missing would leave a directory where the file goes");
            }
        }
        assertTrue(fromConfigMap, "the volume " + configVolume + " is the ConfigMap's key agentx.toml");
        assertTrue(Files.readString(Path.of("deploy/kubernetes", file)).contains("kubectl create configmap "
                + "agentx-config --from-file=agentx.toml"), "the header says how to make it");
        if (workload(docs).path("kind").asText().equals("StatefulSet")) {
            // each replica its own volume, from the claim template named as the mount
            boolean templated = false;
            for (JsonNode t : workload(docs).path("spec").path("volumeClaimTemplates")) {
                templated |= t.path("metadata").path("name").asText().equals(volume);
            }
            assertTrue(templated, "the data dir's volume " + volume + " is a volumeClaimTemplate");
            return;
        }
        String claim = only(docs, "PersistentVolumeClaim").path("metadata").path("name").asText();
        boolean onClaim = false;
        for (JsonNode v : workload(docs).path("spec").path("template").path("spec").path("volumes")) {
            onClaim |= v.path("name").asText().equals(volume)
                    && v.path("persistentVolumeClaim").path("claimName").asText().equals(claim);
        }
        assertTrue(onClaim, "the data dir's volume is the claim " + claim);
    }

    static List<String> files() {
        return FILES;
    }

    @Test
    void twoReplicasShareADatabaseEachWithItsOwnVolumeAndOneAlwaysServes() throws IOException {
        List<JsonNode> docs = documents("agentx-replicas.yaml");
        JsonNode set = workload(docs);
        assertEquals("StatefulSet", set.path("kind").asText());
        assertEquals(2, set.path("spec").path("replicas").asInt());
        assertEquals("RollingUpdate", set.path("spec").path("updateStrategy").path("type").asText());
        JsonNode url = null;
        for (JsonNode e : container(docs).path("env")) {
            if (e.path("name").asText().equals("AGENTX_DATABASE_URL")) {
                url = e.path("valueFrom").path("secretKeyRef");
            }
        }
        assertNotNull(url, "AGENTX_DATABASE_URL from a Secret");
        assertFalse(url.path("optional").asBoolean(false), "replicas need the database: the Secret is required");
        JsonNode budget = only(docs, "PodDisruptionBudget");
        assertEquals(1, budget.path("spec").path("minAvailable").asInt());
        assertEquals(set.path("spec").path("selector"), budget.path("spec").path("selector"));
        JsonNode headless = docs.stream().filter(d -> d.path("kind").asText().equals("Service")
                && d.path("spec").path("clusterIP").asText().equals("None")).findFirst().orElseThrow();
        assertEquals(set.path("spec").path("serviceName").asText(), headless.path("metadata").path("name").asText());
        // a stopping replica serves on until the Service has dropped it, then drains (20 s) within its grace
        int preStop = container(docs).path("lifecycle").path("preStop").path("sleep").path("seconds").asInt();
        assertTrue(preStop >= 2 && preStop <= 10, "a preStop sleep of a few seconds, not " + preStop);
        int grace = set.path("spec").path("template").path("spec").path("terminationGracePeriodSeconds").asInt();
        assertTrue(preStop + 20 + 10 <= grace, "the sleep, the 20 s drain and the outbox flush fit in " + grace + " s");
    }

    @ParameterizedTest
    @MethodSource("files")
    void theServiceTargetsTheWebhookPortAndTheIngressRoutesOnlyTheWebhookPath(String file) throws IOException {
        List<JsonNode> docs = documents(file);
        JsonNode service = webhookService(docs);
        JsonNode servicePorts = service.path("spec").path("ports");
        assertEquals(1, servicePorts.size(), "the Service exposes the webhook port only: " + servicePorts);
        JsonNode http = servicePorts.get(0);
        assertEquals("http", http.path("targetPort").asText(), "the Service targets the named container port");
        assertEquals("http", http.path("name").asText());
        int servicePort = http.path("port").asInt();

        // deploy/README.md says the same port
        Matcher said = Pattern.compile("a Service on port (\\d+)").matcher(Files.readString(Path.of("deploy",
                "README.md")));
        assertTrue(said.find(), "deploy/README.md names the Service's port");
        assertEquals(servicePort, Integer.parseInt(said.group(1)), "deploy/README.md and the Service agree");

        JsonNode ingress = only(docs, "Ingress");
        String serviceName = service.path("metadata").path("name").asText();
        int paths = 0;
        for (JsonNode rule : ingress.path("spec").path("rules")) {
            for (JsonNode p : rule.path("http").path("paths")) {
                paths++;
                assertEquals(GitHubSettings.DEFAULT_PATH, p.path("path").asText(), "only the webhook path: " + p);
                assertEquals("Exact", p.path("pathType").asText(), p.toString());
                JsonNode backend = p.path("backend").path("service");
                assertEquals(serviceName, backend.path("name").asText(), p.toString());
                JsonNode port = backend.path("port");
                assertTrue(port.path("name").asText().equals("http") || port.path("number").asInt() == servicePort,
                        "the Ingress sends to the webhook port: " + p);
            }
        }
        assertEquals(1, paths, "one path routed by the Ingress: " + ingress);
        assertTrue(ingress.path("spec").path("defaultBackend").isMissingNode(), "no default backend: " + ingress);
    }
}
