package dev.agentx.clarify.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.monitor.AgentOverview;
import dev.agentx.clarify.render.CliRenderer;
import dev.agentx.clarify.status.AgentStatus;
import java.util.List;
import picocli.CommandLine.Command;

/** {@code agentx state}: agent statuses, with what each waits on or answers. */
@Command(name = "state", mixinStandardHelpOptions = true,
        description = "Agent statuses (idle, working, clarifying, blocked-clarification, done, stuck) from "
                + "agent-status.json, with the clarifications each agent waits on or has to answer.",
        footer = {"", "Examples:", "  agentx state", "  agentx state --json"})
final class StateCommand implements Runnable {
    private final CliContext ctx;

    @picocli.CommandLine.Mixin
    ServerStateOptions database;

    StateCommand(CliContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void run() {
        ctx.noteIfNoProject();
        LocalMode local = ctx.local();
        List<AgentOverview.Agent> agents = AgentOverview.of(local.statuses().read(), local.activeLedgers().scan().active());
        if (ctx.json()) {
            ObjectNode root = ctx.mapper().createObjectNode();
            ArrayNode arr = root.putArray("agents");
            agents.forEach(a -> arr.add(AgentsJson.agent(ctx, a)));
            ctx.printJson(root);
            return;
        }
        if (agents.isEmpty()) {
            ctx.out.println("No agent status yet: agents appear once they run 'agentx hook start' or take part in a "
                    + "clarification.");
            ctx.out.flush();
            return;
        }
        StringBuilder b = new StringBuilder();
        int nameWidth = "AGENT".length();
        for (AgentOverview.Agent a : agents) {
            nameWidth = Math.max(nameWidth, a.name().length());
        }
        String format = "%-" + nameWidth + "s %-21s %-6s %-20s %s";
        int textAt = nameWidth + 1 + 21 + 1 + 6 + 1 + 20 + 1;
        int width = ctx.width();
        b.append(ctx.ansi().bold(String.format(format, "AGENT", "STATUS", "ISSUE", "LAST ACTIVITY", "CLARIFICATIONS")))
                .append('\n');
        for (AgentOverview.Agent a : agents) {
            AgentStatus s = a.status();
            List<String> what = AgentsJson.involvement(a);
            b.append(String.format(format, a.name(), s == null ? "-" : s.status().wire(),
                    s == null || s.issue() == null ? "-" : "#" + s.issue(),
                    s == null || s.lastActivity() == null ? "-"
                            : s.lastActivity().truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString(),
                    what.isEmpty() ? "-" : cell(what.get(0), width, textAt)).stripTrailing()).append('\n');
            for (String more : what.subList(Math.min(1, what.size()), what.size())) {
                b.append(String.format(format, "", "", "", "", cell(more, width, textAt)).stripTrailing()).append('\n');
            }
        }
        ctx.out.print(b);
        ctx.out.flush();
    }

    /** The last column's text, cut to the terminal's width when there is one. */
    private static String cell(String text, int width, int at) {
        return width > 0 ? CliRenderer.fit(text, width - at) : text;
    }
}
