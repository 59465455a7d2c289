package dev.agentx.clarify.cli;

import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Arrays;
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
        PrintWriter out = new PrintWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), true);
        PrintWriter err = new PrintWriter(new OutputStreamWriter(System.err, StandardCharsets.UTF_8), true);
        int code = run(args, out, err, System.getenv(), Path.of("").toAbsolutePath(), Clock.systemUTC(),
                System.console() != null, ctx -> LocalMode.open(ctx.resolvedRoot(), ctx.clock, ctx.env));
        out.flush();
        err.flush();
        System.exit(code);
    }

    /** Runs one command line and returns its exit code; tests call this in-process. */
    public static int run(String[] args, PrintWriter out, PrintWriter err, Map<String, String> env, Path cwd,
                          Clock clock, boolean terminal, Function<CliContext, LocalMode> opener) {
        CliContext ctx = new CliContext(out, err, env, cwd, clock, terminal, opener);
        // --json decides the form of usage errors too, which picocli reports before it sets options.
        ctx.jsonOutput = Arrays.stream(args).takeWhile(a -> !a.equals("--")).anyMatch("--json"::equals);
        CommandLine cl = commandLine(ctx);
        cl.setOut(out);
        cl.setErr(err);
        int code = cl.execute(args);
        if (code == 0) {
            MonitorOutput.afterCommand(ctx, cl.getParseResult());
        }
        return code;
    }

    static CommandLine commandLine(CliContext ctx) {
        CommandLine cl = new CommandLine(new AgentxCommand(ctx), new Factory(ctx));
        cl.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            if (ex instanceof ClarifyException ce) {
                return ctx.error(ce.code(), ce.getMessage());
            }
            if (ex instanceof UncheckedIOException io) {
                log().debug("I/O failure", io);
                return ctx.error(ErrorCode.INTERNAL, io.getMessage());
            }
            log().debug("internal error", ex);
            return ctx.error(ErrorCode.INTERNAL, ex.toString() + " (please report this with the command you ran)");
        });
        cl.setParameterExceptionHandler((ex, args) -> {
            CommandLine c = ex.getCommandLine();
            String help = "Try '" + c.getCommandSpec().qualifiedName() + " --help' for usage and examples.";
            if (ctx.json()) {
                return ctx.error(ErrorCode.USAGE, ex.getMessage() + ". " + help);
            }
            ctx.err.println("USAGE: " + ex.getMessage());
            ctx.err.println(help);
            ctx.err.flush();
            return ErrorCode.USAGE.exitCode();
        });
        return cl;
    }

    /** Creates command objects with the shared context. */
    private record Factory(CliContext ctx) implements CommandLine.IFactory {
        @Override
        public <K> K create(Class<K> cls) throws Exception {
            try {
                return cls.getDeclaredConstructor(CliContext.class).newInstance(ctx);
            } catch (NoSuchMethodException e) {
                return CommandLine.defaultFactory().create(cls);
            }
        }
    }

    /** Version from the build, shown by --version. */
    public static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            Properties p = new Properties();
            try (InputStream in = Main.class.getResourceAsStream("/agentx-version.properties")) {
                if (in != null) {
                    p.load(in);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return new String[] {"agentx " + p.getProperty("version", "unknown") + " (AgentX Clarify, Java "
                    + System.getProperty("java.version") + ")"};
        }
    }
}
