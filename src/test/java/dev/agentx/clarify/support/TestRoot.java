package dev.agentx.clarify.support;

import dev.agentx.clarify.channel.AnswerChannel;
import dev.agentx.clarify.channel.HumanChannel;
import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.cli.Main;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.lock.LockObserver;
import dev.agentx.clarify.lock.LockSettings;
import dev.agentx.clarify.lock.ProcessIdentity;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/** A project root in a temp dir, with Local Mode wired to a test clock, and an in-process CLI. */
public final class TestRoot {
    public final Path root;
    public final MutableClock clock;
    private final AnswerChannel channel;

    public TestRoot(Path root, MutableClock clock) {
        this(root, clock, new HumanChannel());
    }

    public TestRoot(Path root, MutableClock clock, AnswerChannel channel) {
        this.root = root;
        this.clock = clock;
        this.channel = channel;
    }

    public LocalMode local() {
        return new LocalMode(root, clock, locks(), channel);
    }

    /** Locks whose waiting moves the test clock, so a lock timeout takes no real time. */
    public LockManager locks() {
        return new LockManager(clock, LockSettings.defaults(), clock::advance, ProcessIdentity.current(),
                LockObserver.NONE);
    }

    public Path state() {
        return root.resolve(".agentx/state");
    }

    public void write(String relative, String content) {
        try {
            Path p = root.resolve(relative);
            Files.createDirectories(p.getParent());
            Files.writeString(p, content, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Result of one in-process CLI run. */
    public record Run(int code, String out, String err) {
    }

    public Run cli(String... args) {
        return cli(Map.of(), args);
    }

    public Run cli(Map<String, String> env, String... args) {
        return cli(env, false, args);
    }

    /** A run whose output goes to a terminal ({@code terminal}) or to a file or pipe. */
    public Run cli(Map<String, String> env, boolean terminal, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = Main.run(args, new PrintWriter(out), new PrintWriter(err), env, root, clock, terminal,
                ctx -> new LocalMode(ctx.resolvedRoot(), clock, locks(), channel));
        return new Run(code, out.toString(), err.toString());
    }

    /** Every file under the root with its bytes, to prove a refused command changed nothing. */
    public Map<String, String> snapshot() {
        Map<String, String> files = new TreeMap<>();
        if (!Files.exists(root)) {
            return files;
        }
        try (Stream<Path> walk = Files.walk(root)) {
            walk.forEach(p -> {
                String name = p.getFileName() == null ? "" : p.getFileName().toString();
                if (p.startsWith(root.resolve(".agentx/state/.runtime"))) {
                    // the runtime folder: what the processes share while they run (lock queues, the
                    // lock content file this process writes again at every lock it takes), no state
                    return;
                }
                try {
                    String key = root.relativize(p).toString();
                    files.put(key, Files.isDirectory(p) ? "<dir>" : Files.readString(p, StandardCharsets.ISO_8859_1));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return files;
    }
}
