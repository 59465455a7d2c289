package dev.agentx.clarify.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The hand-written id parser refuses (VALIDATION) what CLR-\d+-\d{3,} does not match, finds no
 * record (NOT_FOUND) for a match not written as ids are (extra zeros, numbers too large), and reads
 * the rest with the same values; nothing around an id is taken.
 */
class ClarificationIdTest {
    private static final Pattern FORMAT = Pattern.compile("CLR-(\\d+)-(\\d{3,})");

    /** The reference parse, with the regular expression. */
    private static String reference(String text) {
        Matcher m = FORMAT.matcher(text);
        if (!m.matches()) {
            return "invalid";
        }
        try {
            int issue = Integer.parseInt(m.group(1));
            int seq = Integer.parseInt(m.group(2));
            if (issue < 1 || seq < 1) {
                return "invalid";
            }
            return text.equals(String.format("CLR-%d-%03d", issue, seq)) ? issue + "/" + seq : "no such record";
        } catch (NumberFormatException e) {
            return "no such record";
        }
    }

    private static String ours(String text) {
        try {
            ClarificationId id = ClarificationId.parse(text);
            return id.issue() + "/" + id.seq();
        } catch (ClarifyException e) {
            if (e.code() == ErrorCode.NOT_FOUND) {
                return "no such record";
            }
            assertEquals(ErrorCode.VALIDATION, e.code());
            return "invalid";
        }
    }

    @Test
    void acceptsWhatTheFormatAcceptsAndNothingElse() {
        List<String> cases = new ArrayList<>(List.of("CLR-42-001", " CLR-42-001 ", "CLR-1-0001", "CLR-0-001",
                "CLR-1-000", "CLR-007-012", "CLR-42-01", "CLR-42-", "CLR--001", "CLR-42", "CLR-", "CLR", "", "clr-1-001",
                "CLR-4-2-001", "CLR-99999999999-001", "CLR-1-99999999999", "CLR-+1-001", "CLR-1-+01", "CLR-1-001x",
                "xCLR-1-001", "CLR-1 -001", "CLR-\u0661-001", "\tCLR-3-004\n", "CLR-1-001\n", "CLR-1-001 "));
        Random random = new Random(7);
        String alphabet = "CLR-0123456789 x";
        for (int i = 0; i < 20_000; i++) {
            StringBuilder b = new StringBuilder(random.nextBoolean() ? "CLR-" : "");
            int n = random.nextInt(12);
            for (int j = 0; j < n; j++) {
                b.append(alphabet.charAt(random.nextInt(alphabet.length())));
            }
            cases.add(b.toString());
        }
        for (String s : cases) {
            assertEquals(reference(s), ours(s), s);
        }
    }

    @Test
    void anIdWithExtraZerosNamesTheIdItLooksLike() {
        ClarifyException e = org.junit.jupiter.api.Assertions.assertThrows(ClarifyException.class,
                () -> ClarificationId.parse("CLR-052-0001"));
        assertEquals(ErrorCode.NOT_FOUND, e.code());
        org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("like CLR-52-001"), e.getMessage());
    }

    @org.junit.jupiter.api.Test
    void toStringPadsTheSequenceToThreeDigitsAsTheFormatDid() {
        for (int issue : new int[] {1, 42, 2147483647}) {
            for (int seq : new int[] {1, 9, 10, 99, 100, 999, 1000, 12345, 2147483647}) {
                org.junit.jupiter.api.Assertions.assertEquals(String.format("CLR-%d-%03d", issue, seq),
                        new ClarificationId(issue, seq).toString());
            }
        }
    }
}
