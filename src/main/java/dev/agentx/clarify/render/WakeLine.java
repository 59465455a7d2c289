package dev.agentx.clarify.render;

import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import java.util.Locale;
import java.util.Optional;

/**
 * The last line of a comment that settles a question for the role that asked it: the role's
 * {@code [wake]} mention (which starts its agent again) and what changed, so the agent's next run
 * finds in that comment what it waited for.
 *
 * <p>A question "of a role" is a clarification that role asked (its {@code from}): the requester is
 * the one that waits. A thread entry settles it when it is
 * <ul>
 *   <li>an answer that counts (an agent's proposal waiting for a person does not; the answer that
 *       accepts it does);</li>
 *   <li>a resolution (a maintainer's decision on its escalation, or its resolution by someone else);</li>
 *   <li>its abandonment by someone else (a person, or the closing).</li>
 * </ul>
 * Never settling: questions, proposals, escalations and stale notices (the asker still waits). Never
 * woken: the asker by its own change, that is an entry written by the requester role, or by the very
 * login the mention names. Each entry is one comment, posted once, so one change wakes once.
 */
public final class WakeLine {
    private WakeLine() {
    }

    /**
     * The line for thread entry {@code index} of {@code r} with {@code mention} (the requester's
     * {@code [wake]} value); empty when the entry does not settle the question or is the asker's own.
     */
    public static Optional<String> of(ClarificationRecord r, int index, String mention) {
        if (mention == null || index < 0 || index >= r.thread().size()) {
            return Optional.empty();
        }
        ThreadEntry e = r.thread().get(index);
        if (byAsker(r, e, mention)) {
            return Optional.empty();
        }
        String id = r.id();
        String what;
        if (e.type() == EntryType.ANSWER && e.isAnswer()) {
            what = id + " was answered by **" + safe(e.from()) + "** (round " + e.round() + ")"
                    + (e.acceptedBy() == null ? "" : ", accepted by **" + safe(e.acceptedBy()) + "**")
                    + ": the answer is quoted above; follow up or resolve it.";
        } else if (e.type() == EntryType.RESOLUTION && r.status() == Status.ABANDONED) {
            what = id + " was abandoned by **" + safe(e.from()) + "**: no answer will come; the reason is quoted above.";
        } else if (e.type() == EntryType.RESOLUTION) {
            what = escalatedBefore(r, index)
                    ? id + " was escalated and **" + safe(e.from()) + "** decided it: the decision is quoted above."
                    : id + " was resolved by **" + safe(e.from()) + "**: the resolution is quoted above.";
        } else {
            return Optional.empty();
        }
        return Optional.of(mention + " " + what);
    }

    /** Whether the entry is the requester's own change: written as the requester role, or by the mentioned login. */
    private static boolean byAsker(ClarificationRecord r, ThreadEntry e, String mention) {
        String login = mention.indexOf('/') >= 0 ? null : mention.substring(1).toLowerCase(Locale.ROOT);
        return e.from().equalsIgnoreCase(r.from()) || (login != null && (e.from().equalsIgnoreCase(login)
                || (e.acceptedBy() != null && e.acceptedBy().equalsIgnoreCase(login))));
    }

    private static boolean escalatedBefore(ClarificationRecord r, int index) {
        for (int i = 0; i < index; i++) {
            if (r.thread().get(i).type() == EntryType.ESCALATION) {
                return true;
            }
        }
        return false;
    }

    private static String safe(String name) {
        return MarkdownRenderer.neutralise(name);
    }
}
