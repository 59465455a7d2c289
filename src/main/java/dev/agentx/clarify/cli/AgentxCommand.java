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
                "  agentx clarify ask --issue 42 --from engineer --to architect --topic \"Auth\" \"JWT or sessions?\"",
                "  agentx clarify answer CLR-42-001 \"JWT, see ADR-42.\"",
                "  agentx clarify --issue 42",
                "  agentx --json clarify",
                "  agentx hook start --agent engineer --issue 42",
                "  agentx ready",
                "  agentx serve                     GitHub Mode webhook server (see 'agentx serve --help')",
                "  agentx sync --repo acme/app      rebuild the GitHub Mode ledger mirror from the app's comments",
                "", "Exit codes: 0 ok, 1 internal error, 2 usage, 3 protocol error "
                + "(SCOPE_VIOLATION, NOT_FOUND, MAX_ROUNDS_EXCEEDED, INVALID_STATE, VALIDATION), 4 LOCK_TIMEOUT."})
public final class AgentxCommand implements Runnable {
    private final CliContext ctx;

    @Spec
    CommandSpec spec;

    public AgentxCommand(CliContext ctx) {
        this.ctx = ctx;
    }

    @Option(names = "--json", scope = ScopeType.INHERIT,
            description = "Machine-readable JSON on stdout, errors included as {\"error\":{...}}.")
    void setJson(boolean json) {
        ctx.jsonOutput = ctx.jsonOutput || json;
    }

    @Option(names = "--root", scope = ScopeType.INHERIT, paramLabel = "DIR",
            description = "Project root holding .agentx/ (default: nearest parent with .agentx/, else the current directory).")
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
        spec.commandLine().usage(ctx.out);
    }
}
