package dev.agentx.clarify.status;

import dev.agentx.clarify.events.ClarificationEvent;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * How clarification events move agent statuses (docs/protocol.md): a blocking request puts the
 * requester in {@code blocked-clarification}; the target is {@code clarifying} while it owes an
 * answer; both go back to {@code working} when answered or closed. An escalated blocking record
 * blocks its requester on {@code human} until a human closes it. An agent's status changes only if it refers to the
 * record of the event (or is being set by it), so work on other records is not disturbed.
 */
public final class StatusRules {
    /** What an escalated requester waits on. */
    public static final String HUMAN = "human";

    private StatusRules() {
    }

    public static Map<String, AgentStatus> apply(Map<String, AgentStatus> current, List<ClarificationEvent> events) {
        Map<String, AgentStatus> out = new TreeMap<>(current);
        for (ClarificationEvent e : events) {
            String id = e.clarificationId();
            switch (e.event()) {
                case REQUESTED -> {
                    if (e.blocking()) {
                        out.put(e.fromAgent(), AgentStatus.blocked(e.issueNumber(), e.timestamp(), id, e.toAgent()));
                    }
                    out.put(e.toAgent(), AgentStatus.clarifying(e.issueNumber(), e.timestamp(), id, e.fromAgent()));
                }
                case ANSWERED, RESOLVED, ABANDONED -> {
                    release(out, e.toAgent(), e);
                    release(out, e.fromAgent(), e);
                }
                case ESCALATED -> {
                    release(out, e.toAgent(), e);
                    if (e.blocking()) {
                        out.put(e.fromAgent(), AgentStatus.blocked(e.issueNumber(), e.timestamp(), id, HUMAN));
                    }
                }
                case STALE -> {
                    // nothing changes: the target still owes the answer
                }
                default -> throw new IllegalStateException("unhandled event " + e.event());
            }
        }
        return out;
    }

    private static void release(Map<String, AgentStatus> out, String agent, ClarificationEvent e) {
        AgentStatus s = out.get(agent);
        if (s != null && e.clarificationId().equals(s.clarificationId())) {
            out.put(agent, AgentStatus.working(e.issueNumber(), e.timestamp()));
        }
    }
}
