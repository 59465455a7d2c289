package dev.agentx.clarify.monitor;

import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.status.AgentStatus;
import dev.agentx.clarify.status.StatusRules;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code agentx state}: each agent's status from {@code agent-status.json} next to what the
 * ledgers say it is waiting on and answering right now. The status file mirrors the ledgers but
 * is also set by hooks; the ledgers are the truth about clarifications, so both are shown.
 */
public final class AgentOverview {
    private AgentOverview() {
    }

    /** A record the agent is involved in, with the issue it belongs to. */
    public record Involvement(int issue, ClarificationRecord record) {
        /** For a requester: who it waits on, the target or (escalated) a human. */
        public String waitsOn() {
            return record.status() == Status.ESCALATED ? StatusRules.HUMAN : record.to();
        }
    }

    /**
     * @param status the agent's entry in agent-status.json, or null if it has none
     * @param waitingFor records the agent asked that wait for an answer or a human's decision
     * @param answering records addressed to the agent that wait for its answer
     */
    public record Agent(String name, AgentStatus status, List<Involvement> waitingFor, List<Involvement> answering) {
        public Agent {
            waitingFor = List.copyOf(waitingFor);
            answering = List.copyOf(answering);
        }
    }

    /** Every agent with a status or an open clarification, by name. */
    public static List<Agent> of(Map<String, AgentStatus> statuses, List<Ledger> activeLedgers) {
        Map<String, List<Involvement>> waiting = new TreeMap<>();
        Map<String, List<Involvement>> answering = new TreeMap<>();
        for (Ledger l : activeLedgers) {
            for (ClarificationRecord r : l.active()) {
                Involvement in = new Involvement(l.issueNumber(), r);
                if (r.status().awaitingAnswer() || r.status() == Status.ESCALATED) {
                    waiting.computeIfAbsent(r.from(), k -> new ArrayList<>()).add(in);
                }
                if (r.status().awaitingAnswer()) {
                    answering.computeIfAbsent(r.to(), k -> new ArrayList<>()).add(in);
                }
            }
        }
        TreeMap<String, Agent> out = new TreeMap<>();
        List<String> names = new ArrayList<>(statuses.keySet());
        names.addAll(waiting.keySet());
        names.addAll(answering.keySet());
        for (String name : names) {
            out.computeIfAbsent(name, n -> new Agent(n, statuses.get(n), waiting.getOrDefault(n, List.of()),
                    answering.getOrDefault(n, List.of())));
        }
        return List.copyOf(out.values());
    }

    /** One agent's entry; an agent without status or clarifications gets an empty one. */
    public static Agent one(String name, Map<String, AgentStatus> statuses, List<Ledger> activeLedgers) {
        return of(statuses, activeLedgers).stream().filter(a -> a.name().equals(name)).findFirst()
                .orElse(new Agent(name, statuses.get(name), List.of(), List.of()));
    }
}
