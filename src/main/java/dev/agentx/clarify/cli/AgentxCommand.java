package dev.agentx.clarify.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

@Command(name = "agentx", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        scope = ScopeType.INHERIT,
        description = "AgentX Clarify: agents and people clarify work with each other, routed through a hub "
                + "that checks scope, keeps a locked per-issue ledger and limits rounds.",
        footer = {"", "Examples:",
                "  agentx clarify ask --issue 42 --from engineer --to architect \\",
                "      --topic \"Auth\" \"JWT or sessions?\"",
                "  agentx clarify answer CLR-42-001 \"JWT, see ADR-42.\"",
                "  agentx clarify --issue 42",
                "  agentx --json clarify",
                "  agentx hook start --agent engineer --issue 42",
                "  agentx ready",
                "  agentx init                      start .agentx/ in this project",
                "  agentx serve                     GitHub Mode: the App's webhook server",
                "  agentx sync --repo acme/app      rebuild GitHub Mode's ledgers from comments",
                "", "Exit codes: 0 ok, 1 internal error, 2 usage, 4 LOCK_TIMEOUT (retry),",
                "  3 protocol error: SCOPE_VIOLATION, NOT_FOUND, MAX_ROUNDS_EXCEEDED,",
                "  INVALID_STATE, VALIDATION."})
public final class AgentxCommand implements Runnable {
    private final CliContext ctx;

    @Spec
    CommandSpec spec;

    public AgentxCommand(CliContext ctx) {
        this.ctx = ctx;
    }

    @Option(names = "--json", scope = ScopeType.INHERIT,
            description = "Machine-readable JSON on stdout; errors too, as an error object with its code and message.")
    void setJson(boolean json) {
        ctx.jsonOutput = ctx.jsonOutput || json;
    }

    @Option(names = "--root", scope = ScopeType.INHERIT, paramLabel = "DIR",
            description = "The project folder that holds .agentx/ (default: the nearest folder upward that has "
                    + "one, else the current folder).")
    void setRoot(Path root) {
        Path dir = ctx.cwd.resolve(root);
        if (!Files.isDirectory(dir)) {
            throw new ParameterException(spec.commandLine(), "--root " + root + ": " + (Files.exists(dir)
                    ? "not a folder" : "no such folder") + "; give the project folder that holds .agentx/ "
                    + "(or will: see 'agentx init')");
        }
        ctx.root = root;
    }

    @Override
    public void run() {
        Commands.printUsage(ctx, spec.commandLine());
    }
}
