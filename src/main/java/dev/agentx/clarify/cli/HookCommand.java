package dev.agentx.clarify.cli;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.monitor.AgentOverview;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Roles;
import dev.agentx.clarify.routing.Validation;
import dev.agentx.clarify.status.AgentStatus;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BiFunction;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code agentx hook start|finish --agent A --issue N}: the workflow's boundary hooks. They set
 * the agent's status ({@code working} on start, {@code done} on finish) and, like every trigger,
 * are followed by a monitor pass.
 */
@Command(name = "hook", mixinStandardHelpOptions = true,
        description = "Workflow hooks: record that an agent starts or finishes its work on an issue, then run the monitor.",
        footer = {"", "Examples:", "  agentx hook start --agent engineer --issue 42",
                "  agentx hook finish --agent engineer --issue 42"})
final class HookCommand {
    HookCommand() {
    }

    /** Options and work shared by both hooks: the status each sets, and how it says so. */
    abstract static class Hook implements Runnable {
        final CliContext ctx;
        private final BiFunction<Integer, Instant, AgentStatus> status;
        private final String doing;

        @Option(names = "--agent", required = true, paramLabel = "A", description = "The agent (role), e.g. engineer.")
        String agent;
        @Option(names = "--issue", required = true, paramLabel = "N", description = "The issue number.")
        int issue;

        Hook(CliContext ctx, BiFunction<Integer, Instant, AgentStatus> status, String doing) {
            this.ctx = ctx;
            this.status = status;
            this.doing = doing;
        }

        @Override
        public void run() {
            LocalMode local = ctx.local();
            int n = Validation.issue(issue);
            String name = known(local, agent);
            AgentStatus next = status.apply(n, ctx.clock.instant().truncatedTo(ChronoUnit.MILLIS));
            local.statuses().update(name, m -> {
                Map<String, AgentStatus> all = new TreeMap<>(m);
                all.put(name, next);
                return all;
            });
            AgentOverview.Agent a = AgentOverview.one(name, local.statuses().read(), ctx.scan().active());
            if (ctx.json()) {
                ctx.printJson(AgentsJson.agent(ctx, a));
                return;
            }
            ctx.out.println(name + " " + doing + " #" + n);
            ctx.out.flush();
            for (String s : AgentsJson.involvement(a)) {
                ctx.err.println("note: " + name + " is " + s);
            }
            ctx.err.flush();
        }

        private static String known(LocalMode local, String agent) {
            String canonical = Roles.canonical(agent);
            Set<String> known = local.knownAgents();
            if (canonical == null || !known.contains(canonical)) {
                throw new ClarifyException(ErrorCode.VALIDATION, "Unknown agent '" + agent + "'. Known agents: "
                        + String.join(", ", known) + " (aliases: pm, ux).");
            }
            return canonical;
        }
    }

    @Command(name = "start", mixinStandardHelpOptions = true,
            description = "The agent starts work on the issue: its status becomes working. Then the monitor runs.",
            footer = {"", "Example:", "  agentx hook start --agent engineer --issue 42"})
    static final class Start extends Hook {
        Start(CliContext ctx) {
            super(ctx, AgentStatus::working, "is working on");
        }
    }

    @Command(name = "finish", mixinStandardHelpOptions = true,
            description = "The agent finished its work on the issue: its status becomes done. Then the monitor runs.",
            footer = {"", "Example:", "  agentx hook finish --agent engineer --issue 42"})
    static final class Finish extends Hook {
        Finish(CliContext ctx) {
            super(ctx, AgentStatus::done, "is done with");
        }
    }
}
