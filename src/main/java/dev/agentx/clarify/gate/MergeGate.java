package dev.agentx.clarify.gate;

import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.render.MarkdownRenderer;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SortedSet;
import java.util.function.IntFunction;

/**
 * What the merge gate concludes for a pull request from the ledgers of the issues it closes and
 * its own: it holds the merge while any blocking clarification there is open (any status but
 * resolved and abandoned); a non-blocking one never holds it. No I/O: the ledgers are handed in.
 */
public final class MergeGate {
    /** The check run's name, which branch protection requires. */
    public static final String CHECK_NAME = "AgentX Clarify";
    /** GitHub refuses a check run's summary over 65,535 characters. */
    static final int MAX_SUMMARY = 65_000;

    private MergeGate() {
    }

    /** How the check run ends. */
    public enum Conclusion {
        /** No blocking clarification open: the gate lets the merge through. */
        SUCCESS,
        /**
         * A blocking clarification is open: a person has to answer. Branch protection blocks a
         * required check with this conclusion as it does {@code failure}; it says an answer is
         * waited for, not that the code failed.
         */
        ACTION_REQUIRED;

        /** The name GitHub's Checks API uses. */
        public String wire() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** One open blocking clarification that holds the merge, and where it is. */
    public record Hold(int issue, String id, String from, String to, Status status, String topic) {
        /** Who waits on whom, in words. */
        public String waits() {
            return switch (status) {
                case ANSWERED -> to + " answered; waits on " + from + " to resolve it";
                case ESCALATED -> from + " waits on a maintainer (escalated from " + to + ")";
                case STALE -> from + " waits on " + to + " (asked again, no answer yet)";
                default -> from + " waits on " + to;
            };
        }
    }

    /**
     * The gate's verdict: its conclusion, the check run's title and summary (Markdown), a link for
     * its details (the first hold's issue, or the pull request), and the holds it lists.
     */
    public record Verdict(Conclusion conclusion, String title, String summary, String detailsUrl, List<Hold> holds) {
        public Verdict {
            holds = List.copyOf(holds);
        }
    }

    /**
     * The verdict for pull request {@code pull} of the repository whose web pages are under {@code
     * htmlUrl} ({@code https://github.com/OWNER/REPO}), closing {@code closes} (its own number left
     * out); {@code ledgers} gives an issue's ledger, empty when it has none.
     */
    public static Verdict evaluate(int pull, SortedSet<Integer> closes, IntFunction<Optional<Ledger>> ledgers,
                                   String htmlUrl) {
        List<Integer> issues = new ArrayList<>();
        issues.add(pull);
        for (int n : closes) {
            if (n != pull) {
                issues.add(n);
            }
        }
        List<Hold> holds = new ArrayList<>();
        for (int n : issues) {
            for (ClarificationRecord r : ledgers.apply(n).map(Ledger::clarifications).orElse(List.of())) {
                if (r.blocking() && r.status().active()) {
                    holds.add(new Hold(n, r.id(), r.from(), r.to(), r.status(), r.topic()));
                }
            }
        }
        String pullUrl = htmlUrl + "/pull/" + pull;
        if (holds.isEmpty()) {
            return new Verdict(Conclusion.SUCCESS, "No blocking clarification open",
                    "No blocking clarification is open on this pull request" + scope(closes, pull)
                            + ", so nothing holds the merge.", pullUrl, holds);
        }
        StringBuilder s = new StringBuilder();
        s.append(holds.size() == 1 ? "A blocking clarification is open" : holds.size()
                + " blocking clarifications are open").append(" on this pull request").append(scope(closes, pull))
                .append(". The merge waits until ").append(holds.size() == 1 ? "it is" : "they are")
                .append(" resolved or abandoned.\n\n");
        for (Hold h : holds) {
            String line = "- [" + h.id() + "](" + htmlUrl + "/issues/" + h.issue() + ") on #" + h.issue() + " ("
                    + h.status().wire() + "): " + MarkdownRenderer.neutralise(h.waits()) + ": "
                    + MarkdownRenderer.inline(h.topic()) + "\n";
            if (s.length() + line.length() > MAX_SUMMARY - 100) {
                s.append("- and ").append(holds.size() - holds.indexOf(h)).append(" more\n");
                break;
            }
            s.append(line);
        }
        String title = holds.size() == 1 ? "1 blocking clarification open" : holds.size()
                + " blocking clarifications open";
        return new Verdict(Conclusion.ACTION_REQUIRED, title, s.toString(), htmlUrl + "/issues/"
                + holds.get(0).issue(), holds);
    }

    /** " or on the issues it closes (#1, #2)", or "" when it closes none. */
    private static String scope(SortedSet<Integer> closes, int pull) {
        List<String> others = new ArrayList<>();
        for (int n : closes) {
            if (n != pull) {
                others.add("#" + n);
            }
        }
        return others.isEmpty() ? "" : " or on the issues it closes (" + String.join(", ", others) + ")";
    }
}
