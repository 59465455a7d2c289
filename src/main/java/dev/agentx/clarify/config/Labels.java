package dev.agentx.clarify.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * {@code [labels]}: the label names GitHub Mode reads and sets. {@code triggerPrefix}
 * ({@code clarify:}) followed by a role asks that role; {@code workflowPrefix} ({@code type:})
 * followed by a workflow's name picks the workflow; {@code pending}, {@code blocked} and
 * {@code escalated} are the status labels the app keeps in step with the ledger. Prefixes are
 * matched without regard to case, as GitHub treats label names.
 */
public record Labels(String triggerPrefix, String workflowPrefix, String pending, String blocked,
                     String escalated) {
    /** GitHub's limit on a label's name. */
    public static final int MAX_LENGTH = 50;
    /** The keys of {@code [labels]}, in the order of the record. */
    public static final List<String> KEYS = List.of("trigger_prefix", "workflow_prefix", "pending", "blocked",
            "escalated");

    public static Labels defaults() {
        return new Labels("clarify:", "type:", "clarification:pending", "blocked:clarification",
                "clarification:escalated");
    }

    /** A problem with a set of names: the {@code [labels]} keys involved (first the one to blame) and why. */
    public record Problem(List<String> keys, String message) {
    }

    /** The value of a {@code [labels]} key. */
    public String get(String key) {
        return switch (key) {
            case "trigger_prefix" -> triggerPrefix;
            case "workflow_prefix" -> workflowPrefix;
            case "pending" -> pending;
            case "blocked" -> blocked;
            case "escalated" -> escalated;
            default -> throw new IllegalArgumentException("no label key " + key);
        };
    }

    /** These names with the key {@code key} set to {@code value}. */
    public Labels with(String key, String value) {
        return new Labels(key.equals("trigger_prefix") ? value : triggerPrefix,
                key.equals("workflow_prefix") ? value : workflowPrefix, key.equals("pending") ? value : pending,
                key.equals("blocked") ? value : blocked, key.equals("escalated") ? value : escalated);
    }

    /** The status labels, in the order the app adds them. */
    public List<String> status() {
        return List.of(pending, blocked, escalated);
    }

    /**
     * For a trigger label ({@code clarify:architect}), the role it names (stripped; empty when it
     * names none); empty for any other label.
     */
    public Optional<String> triggerTarget(String label) {
        return startsWith(label, triggerPrefix) ? Optional.of(label.substring(triggerPrefix.length()).strip())
                : Optional.empty();
    }

    /** The workflow the first workflow label of {@code labels} names (lower-cased), or null. */
    public String workflowOf(List<String> labels) {
        for (String l : labels) {
            if (startsWith(l, workflowPrefix) && !l.substring(workflowPrefix.length()).isBlank()) {
                return l.substring(workflowPrefix.length()).strip().toLowerCase(Locale.ROOT);
            }
        }
        return null;
    }

    /**
     * What is wrong with these names by GitHub's rules and ours, or empty: each label 1 to 50
     * characters without leading or trailing white space (a prefix leaves room for at least one
     * character after it, and may end in a space); no two status labels the same; no status label
     * starting with a prefix (the app would take its own label for a trigger or a workflow); neither
     * prefix starting with the other. Names are compared without regard to case.
     */
    public Optional<Problem> problem() {
        for (String key : KEYS) {
            String value = get(key);
            boolean prefix = key.endsWith("_prefix");
            int max = prefix ? MAX_LENGTH - 1 : MAX_LENGTH;
            if (value.isBlank()) {
                return problem(key, "must not be empty");
            }
            if (value.codePointCount(0, value.length()) > max) {
                return problem(key, "must be at most " + max + " characters" + (prefix ? " (GitHub allows "
                        + MAX_LENGTH + " per label, and the prefix needs a name after it)" : " (GitHub's limit)")
                        + ", got " + value.codePointCount(0, value.length()));
            }
            if (!value.equals(prefix ? value.stripLeading() : value.strip())) {
                return problem(key, "must not " + (prefix ? "start" : "start or end") + " with white space, got '"
                        + value + "'");
            }
            if (value.chars().anyMatch(Character::isISOControl)) {
                return problem(key, "must not contain control characters");
            }
        }
        List<String> status = List.of("pending", "blocked", "escalated");
        for (int i = 0; i < status.size(); i++) {
            for (int j = i + 1; j < status.size(); j++) {
                if (get(status.get(i)).equalsIgnoreCase(get(status.get(j)))) {
                    return Optional.of(new Problem(List.of(status.get(j), status.get(i)), "'" + get(status.get(j))
                            + "' is already the " + status.get(i) + " label; each status label needs its own name"));
                }
            }
        }
        for (String s : status) {
            for (String p : List.of("trigger_prefix", "workflow_prefix")) {
                if (startsWith(get(s), get(p))) {
                    return Optional.of(new Problem(List.of(s, p), "'" + get(s) + "' starts with " + p + " '" + get(p)
                            + "', so the app would take its own status label for a "
                            + (p.startsWith("trigger") ? "clarification request" : "workflow")));
                }
            }
        }
        if (startsWith(triggerPrefix, workflowPrefix) || startsWith(workflowPrefix, triggerPrefix)) {
            List<String> keys = new ArrayList<>(List.of("trigger_prefix", "workflow_prefix"));
            return Optional.of(new Problem(keys, "trigger_prefix '" + triggerPrefix + "' and workflow_prefix '"
                    + workflowPrefix + "' overlap, so a label could be both a clarification request and a workflow"));
        }
        return Optional.empty();
    }

    private static Optional<Problem> problem(String key, String message) {
        return Optional.of(new Problem(List.of(key), message));
    }

    private static boolean startsWith(String s, String prefix) {
        return s.regionMatches(true, 0, prefix, 0, prefix.length());
    }
}
