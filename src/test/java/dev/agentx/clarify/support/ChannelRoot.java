package dev.agentx.clarify.support;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.cli.Main;
import dev.agentx.clarify.support.TestRoot.Run;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;

/**
 * A project root whose answer channels come from its {@code .agentx/config.toml}, as in the real
 * CLI: Local Mode built with an environment, and an in-process CLI over it.
 */
public final class ChannelRoot {
    public final Path root;
    public final Clock clock;
    public final Map<String, String> env = new HashMap<>(System.getenv());
    private final TestRoot base;

    public ChannelRoot(Path root, MutableClock clock) {
        this.root = root;
        this.clock = clock;
        this.base = new TestRoot(root, clock);
        base.write(".agentx/.keep", "");
    }

    public void config(String toml) {
        base.write(".agentx/config.toml", toml);
    }

    /** Writes an executable bash script under the root and returns its absolute path. */
    public Path script(String relative, String body) {
        base.write(relative, "#!/usr/bin/env bash\n" + body);
        Path p = root.resolve(relative);
        try {
            Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return p;
    }

    public LocalMode local() {
        return new LocalMode(root, clock, base.locks(), env);
    }

    public Path state() {
        return base.state();
    }

    public String ledgerJson(int issue) {
        try {
            return Files.readString(state().resolve("clarifications/issue-" + issue + ".json"), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public Map<String, String> snapshot() {
        return base.snapshot();
    }

    public Run cli(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(args, new PrintWriter(out), new PrintWriter(err), env, root, clock, false,
                ctx -> new LocalMode(ctx.resolvedRoot(), clock, base.locks(), env));
        return new Run(code, out.toString(), err.toString());
    }
}
