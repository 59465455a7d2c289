package dev.agentx.clarify.protocol;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A record id {@code CLR-{issue}-{seq:03d}}. */
public record ClarificationId(int issue, int seq) implements Comparable<ClarificationId> {
    private static final Pattern FORMAT = Pattern.compile("CLR-(\\d+)-(\\d{3,})");

    public ClarificationId {
        if (issue < 1) {
            throw new IllegalArgumentException("issue must be positive: " + issue);
        }
        if (seq < 1) {
            throw new IllegalArgumentException("seq must be positive: " + seq);
        }
    }

    /** Parses an id, or throws VALIDATION with a message that shows the expected form. */
    public static ClarificationId parse(String text) {
        if (text == null) {
            throw invalid("(none)");
        }
        Matcher m = FORMAT.matcher(text.trim());
        if (!m.matches()) {
            throw invalid(text);
        }
        try {
            int issue = Integer.parseInt(m.group(1));
            int seq = Integer.parseInt(m.group(2));
            if (issue < 1 || seq < 1) {
                throw invalid(text);
            }
            return new ClarificationId(issue, seq);
        } catch (NumberFormatException e) {
            throw invalid(text);
        }
    }

    public static boolean isValid(String text) {
        try {
            parse(text);
            return true;
        } catch (ClarifyException e) {
            return false;
        }
    }

    private static ClarifyException invalid(String text) {
        return new ClarifyException(ErrorCode.VALIDATION, "Invalid clarification id '" + text
                + "': expected CLR-<issue>-<seq>, for example CLR-42-001 (see 'agentx clarify' for ids).");
    }

    @Override
    public String toString() {
        return String.format("CLR-%d-%03d", issue, seq);
    }

    @Override
    public int compareTo(ClarificationId o) {
        int c = Integer.compare(issue, o.issue);
        return c != 0 ? c : Integer.compare(seq, o.seq);
    }
}
