package dev.agentx.clarify.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.support.GitHubActions;
import dev.agentx.clarify.support.TempDirs;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The release build as .github/workflows/release.yml runs it (its version step, then its build
 * step's own commands), in a copy of the repository committed to a git repository of its own: the
 * jar reports the version it was given and the commit, in --version and in its manifest; the
 * bill of materials and SHA256SUMS are written and the checksums are the files'. Before that, a
 * build of the copy outside any git repository says the commit is "unknown" rather than failing.
 * Maven runs with this build's local repository: with everything there (the release profile's
 * plugin too, after one run), it downloads nothing.
 */
class ReleaseBuildIT {
    private static final String VERSION = "9.8.7";
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void theReleaseBuildMakesTheJarOfTheTagsVersionItsBillOfMaterialsAndChecksums() throws Exception {
        Path repo = dir.resolve("agentx-clarify");
        copyRepository(Path.of("").toAbsolutePath(), repo);
        Map<String, String> env = mavenEnvironment(repo);

        // outside a git repository: the commit is unknown, and the version the pom's snapshot
        GitHubActions.Result plain = GitHubActions.run(repo, env, Duration.ofMinutes(5), mvn(), "-B", "-q",
                "process-resources");
        assertEquals(0, plain.code(), plain.output());
        Properties built = new Properties();
        try (InputStream in = Files.newInputStream(repo.resolve("target/classes/agentx-version.properties"))) {
            built.load(in);
        }
        assertEquals("unknown", built.getProperty("commit"), built.toString());
        assertTrue(built.getProperty("version").endsWith("-SNAPSHOT"), built.toString());
        TempDirs.delete(repo.resolve("target"));

        for (List<String> git : List.of(List.of("init", "-q"), List.of("add", "-A"),
                List.of("-c", "user.name=Release Test", "-c", "user.email=release@example.com", "-c", "commit.gpgsign=false",
                        "commit", "-q", "-m", "the release's commit"))) {
            List<String> command = new ArrayList<>(List.of("git"));
            command.addAll(git);
            GitHubActions.Result r = GitHubActions.run(repo, env, Duration.ofMinutes(1),
                    command.toArray(String[]::new));
            assertEquals(0, r.code(), command + ": " + r.output());
        }
        String head = GitHubActions.run(repo, env, Duration.ofMinutes(1), "git", "rev-parse", "HEAD").output().strip();
        assertTrue(head.matches("[0-9a-f]{40}"), head);

        JsonNode release = GitHubActions.workflow("release.yml");
        GitHubActions.Run version = GitHubActions.runStep(GitHubActions.step(release, "version", "version"), repo,
                Map.of("TAG", "v" + VERSION), env, Duration.ofSeconds(30));
        assertEquals(0, version.code(), version.log());
        assertEquals(VERSION, version.outputs().get("version"));
        GitHubActions.Run build = GitHubActions.runStep(GitHubActions.step(release, "jar", "build"), repo,
                Map.of("VERSION", version.outputs().get("version")), env, Duration.ofMinutes(20));
        assertEquals(0, build.code(), build.log());

        Path jar = repo.resolve("target/agentx.jar");
        GitHubActions.Result shown = GitHubActions.run(repo, env, Duration.ofMinutes(1), java(), "-jar", jar.toString(),
                "--version");
        assertEquals(0, shown.code(), shown.output());
        Matcher line = Pattern.compile("agentx (\\S+) \\(commit ([0-9a-f]+), AgentX Clarify, Java \\S+\\)\n")
                .matcher(shown.output());
        assertTrue(line.matches(), shown.output());
        assertEquals(VERSION, line.group(1));
        assertEquals(head.substring(0, 12), line.group(2));
        GitHubActions.Result json = GitHubActions.run(repo, env, Duration.ofMinutes(1), java(), "-jar", jar.toString(),
                "--json", "--version");
        JsonNode shownJson = JSON.readTree(json.output());
        assertEquals(VERSION, shownJson.path("version").asText(), json.output());
        assertEquals(head, shownJson.path("commit").asText(), json.output());
        try (JarFile j = new JarFile(jar.toFile())) {
            Attributes manifest = j.getManifest().getMainAttributes();
            assertEquals(VERSION, manifest.getValue("Implementation-Version"));
            assertEquals(head, manifest.getValue("SCM-Revision"));
        }

        JsonNode bom = JSON.readTree(repo.resolve("target/agentx.cdx.json").toFile());
        assertEquals("CycloneDX", bom.path("bomFormat").asText());
        assertEquals("application", bom.path("metadata").path("component").path("type").asText());
        assertEquals(VERSION, bom.path("metadata").path("component").path("version").asText());
        List<String> components = new ArrayList<>();
        bom.path("components").forEach(c -> components.add(c.path("group").asText() + ":" + c.path("name").asText()));
        assertTrue(components.contains("info.picocli:picocli"), components.toString());
        assertTrue(components.stream().noneMatch(c -> c.startsWith("org.junit")), "no test dependency: " + components);

        Map<String, String> sums = new TreeMap<>();
        for (String sum : Files.readAllLines(repo.resolve("target/SHA256SUMS"))) {
            Matcher m = Pattern.compile("([0-9a-f]{64})  (\\S+)").matcher(sum);
            assertTrue(m.matches(), sum);
            sums.put(m.group(2), m.group(1));
        }
        assertEquals(Map.of("agentx.jar", sha256(jar), "agentx.cdx.json", sha256(repo.resolve("target/agentx.cdx.json"))),
                sums);
    }

    /** The repository's files as a clone has them: all but the build's output, git's own and local state. */
    private static void copyRepository(Path from, Path to) throws IOException {
        List<String> left = List.of("target", ".git", ".idea", "agentx-data", ".jqwik-database");
        Files.createDirectories(to);
        try (Stream<Path> s = Files.walk(from)) {
            for (Path p : s.toList()) {
                Path rel = from.relativize(p);
                if (rel.toString().isEmpty() || left.contains(rel.getName(0).toString())) {
                    continue;
                }
                if (Files.isDirectory(p)) {
                    Files.createDirectories(to.resolve(rel));
                } else {
                    Files.copy(p, to.resolve(rel), java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
    }

    /**
     * The environment of the copy's Maven and git: this build's Maven first on the PATH, its local
     * repository in the copy's .mvn/maven.config, the JDK running the tests, and git kept from
     * finding a repository above the temporary folder.
     */
    private Map<String, String> mavenEnvironment(Path repo) throws IOException {
        List<String> config = new ArrayList<>();
        String local = System.getProperty("agentx.maven.repo", "");
        if (!local.isBlank()) {
            config.add("-Dmaven.repo.local=" + local);
        }
        Files.createDirectories(repo.resolve(".mvn"));
        Files.write(repo.resolve(".mvn/maven.config"), config);
        String path = System.getenv().getOrDefault("PATH", "");
        String mavenHome = System.getProperty("agentx.maven.home", "");
        if (!mavenHome.isBlank()) {
            path = Path.of(mavenHome, "bin") + File.pathSeparator + path; // the step's bash looks mvn up on it
        }
        return Map.of("PATH", path, "JAVA_HOME", System.getProperty("java.home"),
                "GIT_CEILING_DIRECTORIES", dir.toString());
    }

    /** This build's Maven (the PATH a child is given is not the one its command is looked up on). */
    private static String mvn() {
        String home = System.getProperty("agentx.maven.home", "");
        return home.isBlank() ? "mvn" : Path.of(home, "bin", "mvn").toString();
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    private static String sha256(Path file) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    }
}
