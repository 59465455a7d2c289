package dev.agentx.clarify.cli;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.workflow.WorkflowCatalog;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code agentx init}: scaffolds {@code .agentx/} in a project: a {@code config.toml} whose every
 * setting is a commented example, and the bundled workflows as files to edit. Existing files are
 * left alone unless {@code --force}, so a project's own configuration is never lost by accident.
 */
@Command(name = "init", mixinStandardHelpOptions = true,
        description = {"Start .agentx/ in the project (--root DIR, else the current folder) with a config "
                + "file of commented examples of every setting, and the bundled workflows as files to edit.",
                "Refuses to overwrite existing files unless --force."},
        footer = {"", "Examples:", "  agentx init", "  agentx --root ../my-project init", "  agentx init --force"})
final class InitCommand implements Runnable {
    private final CliContext ctx;

    @Option(names = "--force", description = "Overwrite config.toml and the workflow files if they exist.")
    boolean force;

    InitCommand(CliContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void run() {
        // init works where it is told, never in a parent that already has .agentx/
        Path root = ctx.root != null ? ctx.cwd.resolve(ctx.root).normalize() : ctx.cwd;
        Path agentx = root.resolve(".agentx");
        Map<Path, byte[]> files = new LinkedHashMap<>();
        files.put(agentx.resolve("config.toml"), resource("/init/config.toml"));
        for (String name : new TreeSet<>(WorkflowCatalog.BUNDLED)) {
            files.put(agentx.resolve("workflows").resolve(name + ".toml"), resource("/workflows/" + name + ".toml"));
        }
        List<String> existing = new ArrayList<>();
        files.keySet().stream().filter(Files::exists).forEach(p -> existing.add(root.relativize(p).toString()));
        if (!existing.isEmpty() && !force) {
            throw new ClarifyException(ErrorCode.USAGE, "not overwriting " + String.join(", ", existing) + " in " + root
                    + "; run 'agentx init --force' to replace them with the defaults.");
        }
        // the project whose .agentx/ commands here used until now, if it is a folder above
        Path above = root.toAbsolutePath().getParent() == null ? null
                : LocalMode.findRoot(null, root.toAbsolutePath().getParent());
        Path shadowed = above != null && Files.isDirectory(above.resolve(".agentx")) && !Files.isDirectory(agentx)
                ? above.resolve(".agentx") : null;
        boolean hadFolder = Files.isDirectory(agentx); // e.g. state written before init, kept as it is
        try {
            Files.createDirectories(agentx.resolve("workflows"));
            Files.createDirectories(agentx.resolve("state"));
        } catch (IOException e) {
            throw new ClarifyException(ErrorCode.INTERNAL, "cannot create " + agentx + ": " + e.getMessage(), e);
        }
        files.forEach(AtomicFiles::write);
        if (ctx.json()) {
            var out = ctx.mapper().createObjectNode();
            out.put("root", root.toString());
            var written = out.putArray("files");
            files.keySet().forEach(p -> written.add(root.relativize(p).toString()));
            ctx.printJson(out);
            return;
        }
        ctx.out.println((!existing.isEmpty() ? "Replaced in " + agentx : hadFolder ? "Added to " + agentx
                : "Created " + agentx + " with") + " config.toml and the workflows " + String.join(", ", new TreeSet<>(WorkflowCatalog.BUNDLED)) + ".");
        if (shadowed != null) {
            ctx.out.println("Note: " + shadowed + " is in a folder above; commands run in " + root
                    + " and below now use this project's .agentx/ instead.");
        }
        ctx.out.println("Next: ask your first question, e.g.");
        ctx.out.println("  agentx clarify ask --issue 1 --from engineer --to architect \"Which auth method?\"");
        ctx.out.println("Settings: .agentx/config.toml; who may ask whom: .agentx/workflows/*.toml.");
        ctx.out.flush();
    }

    private static byte[] resource(String name) {
        try (InputStream in = InitCommand.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException("the jar lacks " + name);
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
