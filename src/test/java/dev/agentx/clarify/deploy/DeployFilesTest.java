package dev.agentx.clarify.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.github.GitHubSettings;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.logging.LogSetup;
import dev.agentx.clarify.support.MutableClock;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What can be checked of deploy/ without Docker or a cluster: probes point at real endpoints of the
 * server, every environment variable the files set is one the code reads, the Dockerfile copies
 * what exists, the systemd unit is hardened. (The jar the Dockerfile copies: DeployJarIT.)
 */
class DeployFilesTest {
    static final Path DEPLOY = Path.of("deploy");
    /** Read by the JVM itself, not by agentx. */
    static final Set<String> JVM_ENV = Set.of("JAVA_TOOL_OPTIONS");

    @TempDir
    Path dir;

    static String read(String name) throws IOException {
        return Files.readString(DEPLOY.resolve(name));
    }

    static List<String> all(String regex, String text) {
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile(regex, Pattern.MULTILINE).matcher(text);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    /** The continued ENV instruction of the Dockerfile, as one line. */
    static String dockerEnv(String dockerfile) {
        Matcher m = Pattern.compile("(?m)^ENV ((?:.*\\\\\\n)*.*)$").matcher(dockerfile);
        assertTrue(m.find(), "the Dockerfile sets ENV");
        return m.group(1).replace("\\\n", " ");
    }

    /** The replicas check's sources: the classes {@code bin/replicas-check} runs. */
    static final Path REPLICAS_CHECK = Path.of("src/test/java/dev/agentx/clarify/deploy/replicas");

    /**
     * The replicas check runs on the JDK alone ({@code bin/replicas-check} puts only the test
     * classes on the class path): its sources compile with no class path.
     */
    @Test
    void theReplicasCheckCompilesWithTheJdkAlone(@TempDir Path out) throws IOException {
        List<String> args = new ArrayList<>(List.of("-d", out.toString(), "-proc:none", "-cp", ""));
        try (Stream<Path> files = Files.list(REPLICAS_CHECK)) {
            files.filter(f -> f.toString().endsWith(".java")).forEach(f -> args.add(f.toString()));
        }
        assertTrue(args.size() > 5, "no sources in " + REPLICAS_CHECK);
        javax.tools.JavaCompiler javac = javax.tools.ToolProvider.getSystemJavaCompiler();
        java.io.ByteArrayOutputStream errors = new java.io.ByteArrayOutputStream();
        int rc = javac.run(null, errors, errors, args.toArray(String[]::new));
        assertEquals(0, rc, errors.toString(java.nio.charset.StandardCharsets.UTF_8));
    }

    /** The documented command runs the check as this build compiled it; asked for nothing, it says how to use it. */
    @Test
    void theReplicasCheckCommandRunsTheCheckAndSaysHowToUseIt() throws Exception {
        String main = dev.agentx.clarify.deploy.replicas.ReplicasCheck.class.getName();
        assertTrue(Files.readString(Path.of("bin/replicas-check")).contains("java -cp target/test-classes " + main
                + " \"$@\""), "bin/replicas-check runs " + main);
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                Path.of("target/test-classes").toString(), main).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertEquals(2, p.waitFor(), out);
        assertTrue(out.contains("usage: bin/replicas-check compose [--keep]"), out);
        assertTrue(out.contains("bin/replicas-check kubernetes --database-url URL"), out);
    }

    @Test
    void everyEnvironmentVariableIsOneTheCodeReads() throws IOException {
        Set<String> known = new TreeSet<>(GitHubSettings.ENV_NAMES);
        known.addAll(LogSetup.ENV_NAMES);
        known.addAll(JVM_ENV);
        String docker = read("Dockerfile");
        Map<String, List<String>> used = Map.of(
                "Dockerfile", concat(all("([A-Z][A-Z0-9_]*)=", dockerEnv(docker)), all("\\$\\{([A-Z][A-Z0-9_]*)\\}", docker)),
                "agentx.env.example", all("^#? ?([A-Z][A-Z0-9_]*)=", read("agentx.env.example")),
                "systemd/agentx.service", all("^Environment=([A-Z][A-Z0-9_]*)=", read("systemd/agentx.service")),
                "kubernetes/agentx.yaml", all("^\\s*- name: ([A-Z][A-Z0-9_]*)\\s*$", read("kubernetes/agentx.yaml")),
                "kubernetes/agentx-replicas.yaml", all("^\\s*- name: ([A-Z][A-Z0-9_]*)\\s*$",
                        read("kubernetes/agentx-replicas.yaml")));
        used.forEach((file, names) -> {
            assertFalse(names.isEmpty(), file + " sets no environment variable");
            for (String name : names) {
                assertTrue(known.contains(name), "deploy/" + file + " uses " + name + ", which the code does not read; "
                        + "known: " + known);
            }
        });
        // the example documents every setting
        for (String name : GitHubSettings.ENV_NAMES) {
            assertTrue(used.get("agentx.env.example").contains(name), "agentx.env.example lacks " + name);
        }
    }

    /** What the server reads, in one list: its settings and the logging's. */
    static List<String> serverEnvNames() {
        List<String> names = new ArrayList<>(GitHubSettings.ENV_NAMES);
        names.addAll(LogSetup.ENV_NAMES);
        return names;
    }

    /**
     * Variables read by the code that are not settings of the server: the lock owner's host name
     * (set by the system), the CLI's colours and table width, and the role `agentx mcp` acts as. The
     * server's settings are all in {@link #serverEnvNames()}.
     */
    /** Read by the CLI only (the daemon's among them), never by the server. */
    static final Set<String> NOT_SETTINGS = Set.of("HOSTNAME", "NO_COLOR", "TERM", "COLUMNS", "AGENTX_AGENT",
            "AGENTX_DAEMON", "AGENTX_DAEMON_IDLE_SECONDS", "AGENTX_DAEMON_DIR", "XDG_RUNTIME_DIR");

    @Test
    void everyVariableTheServerReadsIsNamedAgentxOrGithub() throws IOException {
        List<String> names = serverEnvNames();
        for (String name : names) {
            assertTrue(name.matches("(AGENTX|GITHUB)_[A-Z0-9_]+|PORT"), name + " is not AGENTX_* or GITHUB_* (or PORT)");
        }
        for (String name : all("^#? ?([A-Z][A-Z0-9_]*)=", read("agentx.env.example"))) {
            assertTrue(names.contains(name), "agentx.env.example names " + name + ", which the server does not read; "
                    + "it reads " + names);
        }
        // grep: a name the code reads by its literal is in the list (or is no setting at all)
        Pattern read = Pattern.compile("(?:getenv|env\\.get|env\\.containsKey|env\\.getOrDefault)\\(\"([A-Z][A-Z0-9_]*)\"\\)");
        Pattern constant = Pattern.compile("static final String [A-Z_]*ENV[A-Z_]* = \"([A-Z][A-Z0-9_]*)\"");
        Set<String> found = new TreeSet<>();
        try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                String code = Files.readString(f);
                for (Pattern p : List.of(read, constant)) {
                    Matcher m = p.matcher(code);
                    while (m.find()) {
                        found.add(m.group(1));
                        assertTrue(names.contains(m.group(1)) || NOT_SETTINGS.contains(m.group(1)), f + " reads "
                                + m.group(1) + ", which is not in GitHubSettings.ENV_NAMES or LogSetup.ENV_NAMES");
                    }
                }
            }
        }
        assertTrue(found.containsAll(List.of("GITHUB_APP_ID", "PORT", "AGENTX_DATA_DIR")), "the scan finds reads: " + found);
    }

    @Test
    void probesAreRealEndpoints() throws IOException {
        String docker = read("Dockerfile");
        List<String> paths = all("^\\s*CMD curl [^\\n]*http://127\\.0\\.0\\.1:\\$\\{PORT\\}(/[^\"\\s]*)", docker);
        assertEquals(1, paths.size(), "one HEALTHCHECK path in the Dockerfile");
        assertTrue(dockerEnv(docker).contains("PORT=" + GitHubSettings.DEFAULT_PORT)
                && docker.matches("(?s).*\\nEXPOSE " + GitHubSettings.DEFAULT_PORT + "\\b.*"), docker);
        try (GitHubRig rig = new GitHubRig(dir.resolve("data"), MutableClock.at("2026-02-26T10:00:00Z"))) {
            rig.start();
            for (String path : paths) {
                GitHubRig.Response r = rig.request("GET", rig.mode().port(), path, null, Map.of());
                assertEquals(200, r.status(), path + ": " + r.body());
            }
            // the Kubernetes probes, on the port their container port names
            for (KubernetesManifestTest.Probe probe : KubernetesManifestTest.probes()) {
                int port = switch (probe.port()) {
                    case "http" -> rig.mode().port();
                    case "management" -> rig.mode().managementPort();
                    default -> throw new AssertionError("a probe on an unknown port: " + probe);
                };
                GitHubRig.Response r = rig.request("GET", port, probe.path(), null, Map.of());
                assertEquals(200, r.status(), probe + ": " + r.body());
            }
        }
    }

    @Test
    void dockerfileCopiesWhatExistsAndRunsAsNonRoot() throws IOException {
        String docker = read("Dockerfile");
        for (String src : all("^COPY (?!--from)(\\S+) ", docker)) {
            assertTrue(Files.exists(Path.of(src)), "the Dockerfile copies " + src + ", which is not in the repository");
        }
        assertTrue(docker.contains("COPY --from=build /src/target/agentx.jar "), docker);
        assertTrue(docker.contains("WORKDIR /src"), docker);
        assertTrue(docker.matches("(?s).*\\nUSER 10001:10001\\n.*"), "non-root user");
        assertTrue(docker.contains("VOLUME [\"/data\"]") && dockerEnv(docker).contains("AGENTX_DATA_DIR=/data"), docker);
    }

    /** The runtime stage: everything after the last FROM. */
    static String runtimeStage(String dockerfile) {
        return dockerfile.substring(dockerfile.lastIndexOf("\nFROM "));
    }

    @Test
    void theImageRunsTheJvmUnderAnInitThatReapsChildrenAndForwardsSignals() throws IOException {
        String runtime = runtimeStage(read("Dockerfile"));
        List<String> entrypoints = all("(?m)^ENTRYPOINT (.*)$", runtime);
        assertEquals(1, entrypoints.size(), runtime);
        List<String> argv = new ArrayList<>();
        for (JsonNode arg : new ObjectMapper().readTree(entrypoints.get(0))) { // exec form: a JSON array
            argv.add(arg.asText());
        }
        assertEquals(List.of("/usr/bin/tini", "--", "java", "-jar", "/opt/agentx/agentx.jar", "serve"), argv,
                "tini is PID 1: it reaps the processes command channels leave behind and passes SIGTERM to the JVM");
        assertTrue(runtime.matches("(?s).*apt-get install[^\\n]*(\\\\\\n[^\\n]*)*\\btini\\b.*"),
                "the runtime stage installs tini: " + runtime);
        assertFalse(runtime.contains("CMD [") , "no CMD that would replace the arguments: " + runtime);
    }

    /** NAME=value lines of an env file that are not commented out. */
    static Map<String, String> assignments(String envFile) {
        Map<String, String> out = new java.util.LinkedHashMap<>();
        Matcher m = Pattern.compile("(?m)^([A-Z][A-Z0-9_]*)=(.*)$").matcher(envFile);
        while (m.find()) {
            out.put(m.group(1), m.group(2).strip());
        }
        return out;
    }

    @Test
    void oneDataDirPerWayToRunAndTheEnvExampleOverridesNone() throws IOException {
        String docker = read("Dockerfile");
        Matcher image = Pattern.compile("AGENTX_DATA_DIR=(\\S+)").matcher(dockerEnv(docker));
        assertTrue(image.find(), docker);
        String imageDir = image.group(1);
        assertTrue(docker.contains("VOLUME [\"" + imageDir + "\"]"), "the image's data dir is its volume");
        assertTrue(runtimeStage(docker).matches("(?s).*chown agentx:agentx " + Pattern.quote(imageDir) + "\\b.*"),
                "and belongs to the user the image runs as");
        String unit = read("systemd/agentx.service");
        List<String> unitDirs = all("(?m)^Environment=AGENTX_DATA_DIR=(\\S+)$", unit);
        assertEquals(1, unitDirs.size(), unit);
        assertTrue(unit.contains("ReadWritePaths=" + unitDirs.get(0)) && unit.contains("WorkingDirectory="
                + unitDirs.get(0)), "the unit's data dir is the one it may write");
        // 'docker run --env-file' and systemd's EnvironmentFile= both let the file win over the image's
        // ENV and the unit's Environment=: the example must leave the data dir to them.
        Map<String, String> example = assignments(read("agentx.env.example"));
        assertFalse(example.containsKey("AGENTX_DATA_DIR"), "agentx.env.example sets AGENTX_DATA_DIR="
                + example.get("AGENTX_DATA_DIR") + ", overriding the image's " + imageDir + " and the unit's "
                + unitDirs.get(0));
        assertTrue(read("agentx.env.example").contains("# AGENTX_DATA_DIR=" + imageDir), "documented, commented out");
        String readme = read("README.md");
        assertTrue(readme.contains("`" + imageDir + "`") && readme.contains("`" + unitDirs.get(0) + "`"), readme);
        assertTrue(readme.contains("-v agentx-data:" + imageDir + " "), "the docker run of the README mounts it");
    }

    @Test
    void theComposeReplicasReadOneAgentxTomlAndTheExampleLoads() throws IOException {
        JsonNode compose = new com.fasterxml.jackson.dataformat.yaml.YAMLMapper().readTree(
                read("compose/compose.yaml"));
        for (String replica : List.of("agentx-1", "agentx-2")) {
            List<String> volumes = new java.util.ArrayList<>();
            compose.path("services").path(replica).path("volumes").forEach(v -> volumes.add(v.asText()));
            assertTrue(volumes.contains("./agentx.toml:/data/agentx.toml:ro"), replica + ": " + volumes);
        }
        assertTrue(read("compose/compose.yaml").contains("cp deploy/agentx.toml.example deploy/compose/agentx.toml"));
        // the example is a configuration the server starts with, giving every role someone
        dev.agentx.clarify.config.AgentxConfig config = dev.agentx.clarify.config.ConfigLoader.load(
                DEPLOY.resolve("agentx.toml.example"));
        for (String role : List.of("product-manager", "architect", "engineer", "reviewer")) {
            assertFalse(config.roles().getOrDefault(role, List.of()).isEmpty(), role + ": " + config.roles());
        }
    }

    @Test
    void systemdUnitIsHardened() throws IOException {
        String unit = read("systemd/agentx.service");
        for (String option : new String[] {"NoNewPrivileges=yes", "ProtectSystem=strict", "ProtectHome=yes",
                "PrivateTmp=yes", "PrivateDevices=yes", "ProtectKernelTunables=yes", "ProtectKernelModules=yes",
                "ProtectControlGroups=yes", "RestrictNamespaces=yes", "RestrictSUIDSGID=yes", "LockPersonality=yes",
                "CapabilityBoundingSet=", "SystemCallArchitectures=native", "UMask=0077", "User=agentx",
                "KillSignal=SIGTERM", "ReadWritePaths=/var/lib/agentx", "Environment=AGENTX_DATA_DIR=/var/lib/agentx",
                "ExecStart=/usr/bin/java "}) {
            assertTrue(unit.matches("(?s).*(^|\\n)" + Pattern.quote(option) + "(\\n|\\S|\\s).*"), "missing " + option);
        }
        assertTrue(unit.contains("-jar /opt/agentx/agentx.jar serve"), unit);
    }

    @Test
    void systemdCountsTheJvmsExitOnSigtermAsASuccessAndPointsNowhereMadeUp() throws IOException {
        String unit = read("systemd/agentx.service");
        // the JVM ends with 128 + 15 after SIGTERM: without this every 'systemctl stop' is a failure
        assertTrue(unit.matches("(?s).*\\nSuccessExitStatus=143\\n.*"), "SuccessExitStatus=143 in:\n" + unit);
        for (String doc : all("(?m)^Documentation=(.*)$", unit)) {
            assertFalse(doc.matches("https?://[^/]+/?"), "Documentation= points at a bare host: " + doc);
        }
    }

    @Test
    void everyWayToRunTheServerUsesTheSameJvmFlags() throws IOException {
        String container = "-XX:MaxRAMPercentage=75 -XX:+ExitOnOutOfMemoryError -XX:ThreadPriorityPolicy=1";
        // the Kubernetes recipes' 512Mi limit gives a heap too small for promoting at the second collection
        String flags = container + " -XX:MaxTenuringThreshold=1";
        assertTrue(dockerEnv(read("Dockerfile")).contains("JAVA_TOOL_OPTIONS=\"" + flags + "\""), "Dockerfile");
        assertTrue(read("systemd/agentx.service").contains("ExecStart=/usr/bin/java " + flags + " -jar "), "systemd");
        assertTrue(read("kubernetes/agentx.yaml").contains("value: \"" + container + "\""), "Kubernetes");
        assertTrue(read("kubernetes/agentx-replicas.yaml").contains("value: \"" + container + "\""),
                "Kubernetes replicas");
        assertTrue(Files.readString(Path.of("bin/agentx")).contains("serve) cli_opts=\"" + flags + "\""), "bin/agentx");
        assertTrue(Files.readString(Path.of("bench/webhook-bench")).contains("WEBHOOK_BENCH_JAVA_OPTS:-" + flags + "}"),
                "the webhook benchmark measures the server as deployed");
        assertTrue(read("kubernetes/agentx.yaml").contains("memory: \"512Mi\"}")
                && read("kubernetes/agentx-replicas.yaml").contains("memory: \"512Mi\"}")
                && Files.readString(Path.of("bench/serve-bench")).contains("SERVE_BENCH_JAVA_OPTS:--XX:MaxRAM=512m "
                        + container + "}"), "the server-process benchmark measures the Kubernetes recipes' flags and limit");
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }
}
