package dev.agentx.clarify.protocol;

/** A record id {@code CLR-{issue}-{seq:03d}}. */
public record ClarificationId(int issue, int seq) implements Comparable<ClarificationId> {

    public ClarificationId {
        if (issue < 1) {
            throw new IllegalArgumentException("issue must be positive: " + issue);
        }
        if (seq < 1) {
            throw new IllegalArgumentException("seq must be positive: " + seq);
        }
    }

    /**
     * Parses an id, matched exactly: VALIDATION with the expected form if it is not of the form
     * {@code CLR-\d+-\d{3,}}; NOT_FOUND if it is of the form but not as ids are written (no record
     * is {@code CLR-42-0001} or {@code CLR-042-001}: that one is {@code CLR-42-001}), or names an
     * issue or seq too large to exist.
     */
    public static ClarificationId parse(String text) {
        if (text == null) {
            throw invalid("(none)");
        }
        // exactly CLR-(\d+)-(\d{3,}), nothing around it (an id with a stray newline or space is not
        // the same id), read by hand: every ledger read checks every id, and a regular expression
        // costs a fresh CLI process more than the rest of that check
        String t = text;
        int dash = t.indexOf('-', 4);
        if (!t.startsWith("CLR-") || dash < 5 || !digits(t, 4, dash) || t.length() - dash - 1 < 3
                || !digits(t, dash + 1, t.length())) {
            throw invalid(text);
        }
        int issue;
        int seq;
        try {
            issue = Integer.parseInt(t, 4, dash, 10);
            seq = Integer.parseInt(t, dash + 1, t.length(), 10);
        } catch (NumberFormatException e) {
            throw new ClarifyException(ErrorCode.NOT_FOUND, "No clarification has the id '" + text
                    + "': its numbers are larger than any issue or record can have.");
        }
        if (issue < 1 || seq < 1) {
            throw invalid(text);
        }
        ClarificationId id = new ClarificationId(issue, seq);
        // written as toString writes it: no leading zero in the issue, none in a seq of more than 3
        // digits; read from the digits, as this runs for every id of every ledger read
        if (t.charAt(4) == '0' || t.length() - dash - 1 > 3 && t.charAt(dash + 1) == '0') {
            throw new ClarifyException(ErrorCode.NOT_FOUND, "No clarification has the id '" + text
                    + "': ids are written without extra zeros, like " + id + ".");
        }
        return id;
    }

    private static boolean digits(String s, int from, int to) {
        for (int i = from; i < to; i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return false;
            }
        }
        return true;
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
        // CLR-<issue>-<seq, at least 3 digits>: by hand, as String.format was a hot spot of the worker
        String digits = Integer.toString(seq);
        StringBuilder b = new StringBuilder(8 + digits.length()).append("CLR-").append(issue).append('-');
        for (int i = digits.length(); i < 3; i++) {
            b.append('0');
        }
        return b.append(digits).toString();
    }

    @Override
    public int compareTo(ClarificationId o) {
        int c = Integer.compare(issue, o.issue);
        return c != 0 ? c : Integer.compare(seq, o.seq);
    }
}
