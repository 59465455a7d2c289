package dev.agentx.clarify.routing;

import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Shorten;
import dev.agentx.clarify.protocol.ThreadEntry;
import java.util.List;
import java.util.Optional;

/**
 * The text a human reads to decide an escalated record (docs/protocol.md): why, the topic,
 * both agents' latest positions, rounds used, the options and the exact command that resolves it.
 * It names the command of both modes, so the ledger is the same whichever mode escalated.
 */
public final class EscalationSummary {
    private EscalationSummary() {
    }

    /**
     * @param reason why it was escalated
     * @param refusedQuestion a follow-up that was refused for the round limit, or null
     */
    public static String of(ClarificationRecord r, String reason, String refusedQuestion) {
        StringBuilder b = new StringBuilder();
        b.append("Escalated: ").append(reason).append('\n');
        b.append("Topic: ").append(r.topic()).append('\n');
        Optional<ThreadEntry> q = r.lastQuestion();
        if (refusedQuestion != null) {
            b.append(r.from()).append(" (requester) asked for round ").append(r.round() + 1)
                    .append(", refused: ").append(oneLine(refusedQuestion)).append('\n');
        } else if (q.isPresent()) {
            b.append(r.from()).append(" (requester) last asked in round ").append(q.get().round()).append(": ")
                    .append(oneLine(q.get().body())).append('\n');
        }
        Optional<ThreadEntry> a = r.lastAnswer();
        if (a.isPresent()) {
            b.append(r.to()).append(" (target) last answered in round ").append(a.get().round()).append(": ")
                    .append(oneLine(a.get().body())).append('\n');
        } else {
            b.append(r.to()).append(" (target) has not answered yet\n");
        }
        // answered rounds; the record's own round (its "round" field) may be one further, asked and unanswered
        b.append("Rounds used: ").append(r.answeredRounds()).append(" of ").append(r.maxRounds());
        if (r.answeredRounds() < r.round()) {
            b.append(" (round ").append(r.round()).append(" asked, not answered)");
        }
        b.append('\n');
        List<String> options = r.options();
        if (!options.isEmpty()) {
            b.append("Options:");
            for (int i = 0; i < options.size(); i++) {
                b.append(' ').append(i + 1).append(") ").append(options.get(i));
            }
            b.append('\n');
        }
        b.append("Resolve with: agentx clarify resolve ").append(r.id()).append(" -m \"<decision>\"")
                .append(" (on GitHub: /clarify resolve ").append(r.id()).append(" <decision>)");
        return b.toString();
    }

    private static String oneLine(String s) {
        String flat = s.strip().replaceAll("\\s*\\R\\s*", " / ");
        return Shorten.to(flat, 300);
    }
}
