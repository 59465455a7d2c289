package dev.agentx.clarify.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.monitor.AgentOverview;
import dev.agentx.clarify.status.AgentStatus;
import java.util.ArrayList;
import java.util.List;

/** An agent's status with what it waits on and answers, as JSON and as text (state and hook). */
final class AgentsJson {
    private AgentsJson() {
    }

    static ObjectNode agent(CliContext ctx, AgentOverview.Agent a) {
        ObjectNode n = ctx.mapper().createObjectNode();
        n.put("agent", a.name());
        AgentStatus s = a.status();
        if (s == null) {
            n.putNull("status");
        } else {
            n.setAll((ObjectNode) ctx.mapper().valueToTree(s));
        }
        ArrayNode waiting = n.putArray("waitingFor");
        for (AgentOverview.Involvement in : a.waitingFor()) {
            waiting.add(MonitorOutput.brief(ctx, in.issue(), in.record()).put("waitsOn", in.waitsOn()));
        }
        ArrayNode answering = n.putArray("answering");
        for (AgentOverview.Involvement in : a.answering()) {
            answering.add(MonitorOutput.brief(ctx, in.issue(), in.record()));
        }
        return n;
    }

    /** What the agent waits on and answers, one phrase each, e.g. "waiting on architect for CLR-42-001 (#42)". */
    static List<String> involvement(AgentOverview.Agent a) {
        List<String> out = new ArrayList<>();
        for (AgentOverview.Involvement in : a.waitingFor()) {
            out.add("waiting on " + in.waitsOn() + " for " + in.record().id() + (in.record().blocking() ? "" : " (non-blocking)"));
        }
        for (AgentOverview.Involvement in : a.answering()) {
            out.add("answering " + in.record().id() + " from " + in.record().from());
        }
        return out;
    }
}
