package dev.agentx.clarify.workflow;

import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * The bundled workflows (top-level {@code workflows/}, packed into the jar) overlaid by
 * {@code <root>/.agentx/workflows/*.toml} (a workflow is named by its file name without
 * {@code .toml}), overlaid in turn by workflows given already parsed (GitHub Mode: a repository's
 * {@code [workflows.<name>]} tables in {@code .github/agentx.toml}). Files are parsed on first use
 * and cached; the bundled ones come compiled by the build ({@link CompiledWorkflows}), without a
 * TOML parser.
 */
public final class WorkflowCatalog implements WorkflowSource {
    /** The workflows packed in the jar under {@code /workflows/}. */
    public static final Set<String> BUNDLED = Set.of("bug", "epic", "feature", "story");

    private final Path overrideDir;
    private final Map<String, Workflow> inline;
    private final Map<String, Workflow> cache = new ConcurrentHashMap<>();

    /** @param overrideDir {@code .agentx/workflows}, which may not exist */
    public WorkflowCatalog(Path overrideDir) {
        this(overrideDir, Map.of());
    }

    /**
     * @param overrideDir {@code .agentx/workflows}, which may not exist
     * @param inline workflows by (lower-case) name that win over the files and the bundled ones
     */
    public WorkflowCatalog(Path overrideDir, Map<String, Workflow> inline) {
        this.overrideDir = overrideDir;
        this.inline = Map.copyOf(Objects.requireNonNull(inline));
    }

    @Override
    public Workflow workflow(String requested) {
        String name = requested == null ? "" : requested.trim().toLowerCase(Locale.ROOT);
        Workflow cached = cache.get(name);
        if (cached != null) {
            return cached;
        }
        Workflow loaded = load(name);
        cache.put(name, loaded);
        return loaded;
    }

    private Workflow load(String name) {
        Workflow given = inline.get(name);
        if (given != null) {
            return given;
        }
        if (!name.matches(WorkflowParser.NAME)) {
            throw unknown(name);
        }
        if (overrideDir != null) {
            Path file = overrideDir.resolve(name + ".toml");
            if (Files.isRegularFile(file)) {
                try {
                    return WorkflowParser.parse(file.toString(), name, Files.readString(file, StandardCharsets.UTF_8));
                } catch (IOException e) {
                    throw new ClarifyException(ErrorCode.VALIDATION, file + ": cannot read workflow: " + e.getMessage(), e);
                }
            }
        }
        if (BUNDLED.contains(name)) {
            Workflow compiled = compiled().get(name);
            if (compiled != null) {
                return compiled;
            }
            String resource = "/workflows/" + name + ".toml";
            try (InputStream in = WorkflowCatalog.class.getResourceAsStream(resource)) {
                if (in == null) {
                    throw new IllegalStateException("bundled workflow missing from the jar: " + resource);
                }
                return WorkflowParser.parse("bundled workflows/" + name + ".toml", name,
                        new String(in.readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        throw unknown(name);
    }

    /**
     * The bundled workflows as the build compiled them ({@link CompiledWorkflows}), read once per
     * process; empty where the classes were built without that step (an IDE's build), and the
     * bundled TOML is parsed instead.
     */
    static Map<String, Workflow> compiled() {
        return Compiled.WORKFLOWS;
    }

    /** Holds the compiled workflows; read when first asked for. */
    private static final class Compiled {
        static final Map<String, Workflow> WORKFLOWS = read();

        @SuppressWarnings("unchecked")
        private static Map<String, Workflow> read() {
            Supplier<String> data;
            try {
                data = (Supplier<String>) Class.forName(CompiledWorkflows.DATA_CLASS).getDeclaredConstructor().newInstance();
            } catch (ClassNotFoundException e) {
                return Map.of();
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("cannot make " + CompiledWorkflows.DATA_CLASS, e);
            }
            try {
                return Map.copyOf(CompiledWorkflows.read(new ByteArrayInputStream(
                        data.get().getBytes(StandardCharsets.ISO_8859_1))));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the bundled workflows of " + CompiledWorkflows.DATA_CLASS, e);
            }
        }
    }

    private ClarifyException unknown(String name) {
        return new ClarifyException(ErrorCode.VALIDATION, "Unknown workflow '" + name + "'. Available: "
                + String.join(", ", names()) + " (add your own as .agentx/workflows/<name>.toml, or in GitHub Mode "
                + "as [workflows.<name>] in the repository's .github/agentx.toml).");
    }

    @Override
    public Set<String> names() {
        Set<String> names = new TreeSet<>(BUNDLED);
        names.addAll(inline.keySet());
        if (overrideDir != null && Files.isDirectory(overrideDir)) {
            try (Stream<Path> files = Files.list(overrideDir)) {
                files.map(p -> p.getFileName().toString())
                        .filter(f -> f.endsWith(".toml"))
                        .map(f -> f.substring(0, f.length() - 5).toLowerCase(Locale.ROOT))
                        .forEach(names::add);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return names;
    }
}
