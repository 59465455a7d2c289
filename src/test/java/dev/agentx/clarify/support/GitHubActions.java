package dev.agentx.clarify.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * The repository's GitHub Actions workflows (.github/workflows/): read as data, and a step's script
 * run as the runner runs a {@code shell: bash} step, so that a test runs the workflow's own commands.
 */
public final class GitHubActions {
    public static final Path WORKFLOWS = Path.of(".github", "workflows");
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    private GitHubActions() {
    }

    /** {@code .github/workflows/NAME} as a tree. */
    public static JsonNode workflow(String name) throws IOException {
        return YAML.readTree(WORKFLOWS.resolve(name).toFile());
    }

    /** The step {@code id} of job {@code job}; fails when the workflow has none. */
    public static JsonNode step(JsonNode workflow, String job, String id) {
        for (JsonNode step : workflow.path("jobs").path(job).path("steps")) {
            if (id.equals(step.path("id").asText(null))) {
                return step;
            }
        }
        throw new AssertionError("job " + job + " has no step " + id);
    }

    /** A process's exit code and what it printed, stdout and stderr together. */
    public record Result(int code, String output) {
    }

    /** Runs {@code command} in {@code cwd} with {@code env} added to this process's environment; fails past {@code timeout}. */
    public static Result run(Path cwd, Map<String, String> env, Duration timeout, String... command)
            throws IOException, InterruptedException {
        Path log = Files.createTempFile("command", ".log");
        try {
            ProcessBuilder pb = new ProcessBuilder(command).directory(cwd.toAbsolutePath().toFile())
                    .redirectErrorStream(true).redirectOutput(log.toFile());
            pb.environment().putAll(env);
            Process p = pb.start();
            if (!p.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly().waitFor();
                throw new AssertionError(String.join(" ", command) + " ran over " + timeout + ":\n" + Files.readString(log));
            }
            return new Result(p.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(log);
        }
    }

    /** A step's exit code, what it printed and the outputs it set. */
    public record Run(int code, String log, Map<String, String> outputs) {
    }

    /**
     * Runs the step's {@code run:} script in {@code dir} as the runner does for {@code shell: bash}
     * (bash --noprofile --norc -eo pipefail FILE), with {@code stepEnv} as the step's {@code env:}
     * (its names must be those the step declares: a test gives a value to each), {@code env} added
     * to this process's environment, and a GITHUB_OUTPUT file, read back as the step's outputs
     * (its {@code name=value} lines).
     */
    public static Run runStep(JsonNode step, Path dir, Map<String, String> stepEnv, Map<String, String> env,
            Duration timeout) throws IOException, InterruptedException {
        List<String> declared = new ArrayList<>();
        step.path("env").fieldNames().forEachRemaining(declared::add);
        assertEquals(new TreeSet<>(declared), new TreeSet<>(stepEnv.keySet()), "the step's env: " + step);
        Path script = Files.createTempFile("step", ".sh");
        Path output = Files.createTempFile("github-output", ".txt");
        try {
            Files.writeString(script, step.path("run").asText(), StandardCharsets.UTF_8);
            Map<String, String> all = new HashMap<>(env);
            all.putAll(stepEnv);
            all.put("GITHUB_OUTPUT", output.toString());
            Result r = run(dir, all, timeout, "bash", "--noprofile", "--norc", "-eo", "pipefail", script.toString());
            Map<String, String> outputs = new LinkedHashMap<>();
            for (String line : Files.readAllLines(output)) {
                int eq = line.indexOf('=');
                assertTrue(eq > 0, "an output line name=value: " + line);
                outputs.put(line.substring(0, eq), line.substring(eq + 1));
            }
            return new Run(r.code(), r.output(), outputs);
        } finally {
            Files.deleteIfExists(script);
            Files.deleteIfExists(output);
        }
    }
}
