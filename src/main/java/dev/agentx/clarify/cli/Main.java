package dev.agentx.clarify.cli;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.cli.daemon.DaemonClient;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.Properties;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;

/** {@code agentx}: the Local Mode CLI and the {@code serve} entry of GitHub Mode. */
public final class Main {
    /** Looked up on first use: the CLI must not start the logging system unless something is logged. */
    private static Logger log() {
        return LoggerFactory.getLogger(Main.class);
    }

    private Main() {
    }

    public static void main(String[] args) {
        // a clarify or mcp command goes to the warm daemon when one runs (docs/daemon.md)
        int served = DaemonClient.serve(args);
        if (served >= 0) {
            System.exit(served);
        }
        // the list and show only read: their writers would be built for nothing
        boolean reads = QuickList.parse(args) != null || QuickShow.parse(args) != null;
        Thread json = new Thread(new PrepareJson(!reads, false), "prepare-json");
        json.setDaemon(true);
        json.start();
        Thread annotations = new Thread(new PrepareJson(!reads, true), "prepare-annotations");
        annotations.setDaemon(true);
        annotations.start();
        int code = run(args, System.in, System.out, System.err, System.getenv(), Path.of("").toAbsolutePath(),
                System.console() != null);
        System.exit(code);
    }

    /**
     * Runs one command line on the given standard streams, as a process of its own runs it: this
     * process's streams, or those of a daemon's client.
     */
    public static int run(String[] args, InputStream in, OutputStream stdout, OutputStream stderr,
                          Map<String, String> env, Path cwd, boolean terminal) {
        PrintWriter out = new PrintWriter(new OutputStreamWriter(stdout, StandardCharsets.UTF_8), true);
        PrintWriter err = new PrintWriter(new OutputStreamWriter(stderr, StandardCharsets.UTF_8), true);
        CliContext ctx = new CliContext(in, stdout, out, err, env, cwd, Clock.systemUTC(), terminal, OPENER);
        try {
            return run(args, ctx, true);
        } finally {
            out.flush();
            err.flush();
        }
    }

    /** Opens Local Mode for a command; a class rather than a lambda: a lambda's bootstrap costs every CLI start. */
    private static final class Opener implements Function<CliContext, LocalMode> {
        @Override
        public LocalMode apply(CliContext ctx) {
            return LocalMode.open(ctx.resolvedRoot(), ctx.clock, ctx.env);
        }
    }

    private static final Function<CliContext, LocalMode> OPENER = new Opener();

    /**
     * Loads and exercises what commands use, for the daemon after its start: the data binding
     * (readers and writers), picocli's model, a list over an empty folder and an MCP session (the
     * SDK and Reactor: about 300 ms the first time) that answers {@code initialize} and {@code
     * tools/list} on a bare project, so that the first command it serves does not pay for them.
     * {@code scratch}: a folder of the daemon's own for those, made and removed here (a daemon
     * stopped meanwhile leaves it to the next one, which removes it first).
     */
    public static void warm(Path scratch) {
        new PrepareJson(true, true).run();
        new PrepareJson(true, false).run();
        java.io.OutputStream none = java.io.OutputStream.nullOutputStream();
        try {
            deleteTree(scratch);
            java.nio.file.Files.createDirectories(scratch);
            Path empty = java.nio.file.Files.createDirectory(scratch.resolve("empty"));
            run(new String[] {"clarify", "--help"}, InputStream.nullInputStream(), none, none, Map.of(), empty, false);
            run(new String[] {"clarify", "--json"}, InputStream.nullInputStream(), none, none, Map.of(), empty, false);
            run(new String[] {"clarify", "show", "CLR-1-001"}, InputStream.nullInputStream(), none, none, Map.of(),
                    empty, false);
            Path project = scratch.resolve("project");
            java.nio.file.Files.createDirectories(project.resolve(".agentx"));
            byte[] session = ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                    + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"warm\","
                    + "\"version\":\"1\"}}}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
                    + "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n").getBytes(StandardCharsets.UTF_8);
            run(new String[] {"mcp", "--agent", "engineer"}, new java.io.ByteArrayInputStream(session), none, none,
                    Map.of(), project, false);
        } catch (IOException | RuntimeException e) {
            log().debug("warming up failed", e);
        } finally {
            deleteTree(scratch);
        }
    }

    private static void deleteTree(Path dir) {
        if (!java.nio.file.Files.exists(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (java.util.stream.Stream<Path> files = java.nio.file.Files.walk(dir)) {
            for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                java.nio.file.Files.deleteIfExists(p);
            }
        } catch (IOException | UncheckedIOException e) {
            log().debug("could not remove {}", dir, e);
        }
    }

    /**
     * Builds the data binding of the state files while the command starts: Jackson's first use
     * (its classes, the records' introspection) is the largest single cost of a command's start,
     * and on a second core it runs beside the command's own start. Whatever the command needs
     * before it is built waits for it, not for a second building. {@code writers}: the writers
     * too, after the readers. {@code annotations}: instead, on a thread of its own, only the
     * records' annotations are read, which the JDK makes at run time (a class per annotation
     * type, which the class archive cannot hold) and the mapper's introspection then finds
     * ready, while the other thread builds the mapper.
     */
    private static final class PrepareJson implements Runnable {
        private final boolean writers;
        private final boolean annotations;

        PrepareJson(boolean writers, boolean annotations) {
            this.writers = writers;
            this.annotations = annotations;
        }

        @Override
        public void run() {
            try {
                if (annotations) {
                    dev.agentx.clarify.ledger.LedgerCodec.readAnnotations();
                    if (writers) {
                        dev.agentx.clarify.status.AgentStatusCodec.readAnnotations();
                    }
                    return;
                }
                dev.agentx.clarify.ledger.LedgerCodec.prepare(writers);
                if (writers) {
                    dev.agentx.clarify.status.AgentStatusCodec.prepare();
                    dev.agentx.clarify.events.JsonlEventLog.prepare();
                }
            } catch (RuntimeException | LinkageError e) {
                // the command meets the same problem where it uses the binding, and reports it there
            }
        }
    }

    /** Runs one command line and returns its exit code; tests call this in-process. */
    public static int run(String[] args, PrintWriter out, PrintWriter err, Map<String, String> env, Path cwd,
                          Clock clock, boolean terminal, Function<CliContext, LocalMode> opener) {
        return run(args, new CliContext(out, err, env, cwd, clock, terminal, opener), true);
    }

    /**
     * @param shortcuts whether the list, show, ask, answer and mcp may run without picocli
     *                  ({@link QuickList}, {@link QuickShow}, {@link QuickWrite}, {@link QuickMcp}) and other
     *                  commands on a model of just the commands they name ({@link Commands#lazy});
     *                  tests run command lines both ways and compare. This class names no picocli
     *                  type: picocli's classes are too old for the AppCDS archive to hold all of
     *                  them, and loading one from the jar costs opening the whole jar.
     */
    static int run(String[] args, CliContext ctx, boolean shortcuts) {
        // --json decides the form of usage errors too, which picocli reports before it sets options.
        for (String a : args) {
            if (a.equals("--")) {
                break;
            }
            if (a.equals("--json")) {
                ctx.jsonOutput = true;
                break;
            }
        }
        QuickList.Args list = shortcuts ? QuickList.parse(args) : null;
        // a --root that is no folder is a usage error, which only picocli reports
        if (list != null && (list.root() == null || java.nio.file.Files.isDirectory(ctx.cwd.resolve(list.root())))) {
            try {
                return QuickList.run(ctx, list);
            } finally {
                ctx.close();
            }
        }
        QuickShow.Args show = shortcuts && list == null ? QuickShow.parse(args) : null;
        if (show != null && (show.root() == null || java.nio.file.Files.isDirectory(ctx.cwd.resolve(show.root())))) {
            try {
                return QuickShow.run(ctx, show);
            } finally {
                ctx.close();
            }
        }
        QuickWrite.Args write = shortcuts && list == null && show == null ? QuickWrite.parse(args, ctx) : null;
        if (write != null && (write.root() == null || java.nio.file.Files.isDirectory(ctx.cwd.resolve(write.root())))) {
            try {
                return QuickWrite.run(ctx, write);
            } finally {
                ctx.close();
            }
        }
        QuickMcp.Args mcp = shortcuts && list == null && show == null && write == null ? QuickMcp.parse(args) : null;
        if (mcp != null && (mcp.root() == null || java.nio.file.Files.isDirectory(ctx.cwd.resolve(mcp.root())))) {
            try {
                return QuickMcp.run(ctx, mcp);
            } finally {
                ctx.close();
            }
        }
        try {
            return Commands.execute(args, ctx, shortcuts);
        } finally {
            ctx.close();
        }
    }

    /** What a command that threw ends with: its error code and message (picocli's execution exception handler). */
    static int failed(CliContext ctx, Exception ex) {
        if (ex instanceof ClarifyException ce) {
            return ctx.error(ce.code(), ce.getMessage());
        }
        if (ex instanceof UncheckedIOException io) {
            log().debug("I/O failure", io);
            return ctx.error(ErrorCode.INTERNAL, io.getMessage());
        }
        log().debug("internal error", ex);
        return ctx.error(ErrorCode.INTERNAL, ex.toString() + " (please report this with the command you ran)");
    }

    /** The version from the build: X.Y.Z for a release, X.Y.Z-SNAPSHOT for a local build. */
    static String version() {
        return build().getProperty("version", "unknown");
    }

    /** The commit the jar was built from, in full; "unknown" for a build outside a git checkout. */
    static String commit() {
        return build().getProperty("commit", "unknown");
    }

    /** What the build wrote into agentx-version.properties (the pom's filtered resource). */
    private static Properties build() {
        Properties p = new Properties();
        try (InputStream in = Main.class.getResourceAsStream("/agentx-version.properties")) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return p;
    }

    /** Version from the build and the commit (its first 12 hex digits), shown by --version. */
    public static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String commit = commit();
            return new String[] {"agentx " + version() + " (commit "
                    + commit.substring(0, Math.min(12, commit.length())) + ", AgentX Clarify, Java "
                    + System.getProperty("java.version") + ")"};
        }
    }
}
