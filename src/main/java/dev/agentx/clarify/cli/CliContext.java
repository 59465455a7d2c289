package dev.agentx.clarify.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.ledger.ActiveLedgers;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.render.Ansi;
import dev.agentx.clarify.store.postgres.DatabaseUrl;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import java.util.function.Function;

/** What every command shares: streams, environment, clock, global flags and the lazily opened Local Mode. */
public final class CliContext {
    final PrintWriter out;
    final PrintWriter err;
    final Map<String, String> env;
    final Path cwd;
    final Clock clock;
    final boolean terminal;
    private final Function<CliContext, LocalMode> opener;
    /**
     * The raw standard streams: {@code agentx mcp}'s JSON-RPC and text read from {@code -}. This
     * process's, or a daemon's client's: no command reads {@code System.in} or writes {@code System.out}.
     */
    final java.io.InputStream stdin;
    final java.io.OutputStream stdout;

    boolean jsonOutput;
    Path root;
    /** {@code --database-url} of a read command: the server's PostgreSQL store instead of {@code .agentx/}. */
    String databaseUrl;
    /** {@code --repo} with it. */
    String repo;
    private LocalMode local;
    private AutoCloseable opened;
    private ActiveLedgers.Scan scan;

    public CliContext(PrintWriter out, PrintWriter err, Map<String, String> env, Path cwd, Clock clock,
                      boolean terminal, Function<CliContext, LocalMode> opener) {
        this(System.in, System.out, out, err, env, cwd, clock, terminal, opener);
    }

    public CliContext(java.io.InputStream stdin, java.io.OutputStream stdout, PrintWriter out, PrintWriter err,
                      Map<String, String> env, Path cwd, Clock clock, boolean terminal,
                      Function<CliContext, LocalMode> opener) {
        this.stdin = stdin;
        this.stdout = stdout;
        // every text the CLI prints shows control characters as escapes; colour only where ansi() may use it
        boolean colour = terminal && !env.containsKey("NO_COLOR") && !"dumb".equals(env.getOrDefault("TERM", ""));
        this.out = new PrintWriter(new VisibleWriter(out, colour));
        this.err = new PrintWriter(new VisibleWriter(err, colour));
        this.env = env;
        this.cwd = cwd;
        this.clock = clock;
        this.terminal = terminal;
        this.opener = opener;
    }

    public LocalMode local() {
        if (local == null) {
            if (repo != null && databaseUrl == null) {
                // without the database the command reads .agentx/ of the project, which is no repository's
                throw new ClarifyException(ErrorCode.USAGE, "--repo " + repo + " names a repository of the server's "
                        + "database: give --database-url with it (docs/storage.md), or leave it out to read "
                        + resolvedRoot().resolve(".agentx") + ".");
            }
            if (databaseUrl != null) {
                dev.agentx.clarify.app.ServerStore.Opened o = dev.agentx.clarify.app.ServerStore.open(resolvedRoot(),
                        clock, databaseUrl, repo, env);
                opened = o;
                local = o.local();
            } else {
                local = opener.apply(this);
            }
        }
        return local;
    }

    /** Whether this command reads the server's database ({@code --database-url}): it writes nothing then. */
    boolean onDatabase() {
        return databaseUrl != null;
    }

    /** Closes what the command opened (the database's connections). */
    void close() {
        if (local != null && opened == null) {
            // the statuses this command changed are on disk when it returns, and the locks' spare
            // files are gone (the JVM's exit would do both; a command run in-process, as tests and
            // the daemon run it, does not exit)
            local.close();
        } else if (local != null) {
            local.statuses().flush();
        }
        if (opened != null) {
            try {
                opened.close();
            } catch (Exception e) {
                err.println("warning: " + e.getMessage());
                err.flush();
            }
            opened = null;
        }
    }

    /**
     * The active ledgers, scanned once per command. Only commands that read and do not write ledgers
     * take this scan (the list, {@code clarify stale}, {@code ready}, the hooks after their status
     * write); the monitor pass that follows the command then works on the same scan instead of
     * reading every active ledger a second time.
     */
    ActiveLedgers.Scan scan() {
        if (scan == null) {
            scan = local().activeLedgers().scan();
        }
        return scan;
    }

    /** The scan this command took, or null if it took none. */
    ActiveLedgers.Scan scanned() {
        return scan;
    }

    public Path resolvedRoot() {
        return LocalMode.findRoot(root, cwd);
    }

    /**
     * The columns a table may fill on a terminal: {@code COLUMNS} when set, else 80. Output to a
     * file or a pipe gets 0 (no limit), whatever {@code COLUMNS} says: shells and CI runners export
     * it, and a script reading the output must get every character.
     */
    int width() {
        if (!terminal) {
            return 0;
        }
        String columns = env.get("COLUMNS");
        if (columns != null) {
            try {
                int n = Integer.parseInt(columns.strip());
                if (n > 0) {
                    return n;
                }
            } catch (NumberFormatException e) {
                // not a number: as if unset
            }
        }
        return 80;
    }

    /**
     * For commands that only read: a note on stderr when the project has no {@code .agentx/} yet, so
     * an empty answer is not mistaken for an empty project. Nothing is written.
     */
    void noteIfNoProject() {
        Path root = resolvedRoot();
        if (!jsonOutput && !onDatabase() && !java.nio.file.Files.isDirectory(root.resolve(".agentx"))) {
            err.println("note: no .agentx/ in " + root + " or above it: 'agentx init' starts one there.");
            err.flush();
        }
    }

    public boolean json() {
        return jsonOutput;
    }

    public Ansi ansi() {
        boolean color = !jsonOutput && terminal && !env.containsKey("NO_COLOR")
                && !"dumb".equals(env.getOrDefault("TERM", ""));
        return new Ansi(color);
    }

    public ObjectMapper mapper() {
        return JsonSupport.pretty();
    }

    public void printJson(Object value) {
        try {
            out.println(mapper().writeValueAsString(value));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        out.flush();
    }

    /** Prints an error: its code and message on stderr; with --json also the error object on stdout. */
    public int error(ErrorCode code, String raw) {
        String message = DatabaseUrl.redact(raw); // an argument quoted back may be a URL with its password
        if (jsonOutput) {
            ObjectNode root = mapper().createObjectNode();
            ObjectNode e = root.putObject("error");
            e.put("code", code.name());
            e.put("message", message);
            printJson(root);
        }
        err.println(code.name() + ": " + message);
        err.flush();
        return code.exitCode();
    }
}
