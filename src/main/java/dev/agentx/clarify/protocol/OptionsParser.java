package dev.agentx.clarify.protocol;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Structured questions in plain text. Pure functions, shared by the CLI, the engine, the channels
 * and GitHub Mode's comment parser:
 * <ul>
 *   <li>{@link #extract}: a Markdown list or task list at the end of a question gives its options;
 *       a checked task ({@code - [x] ...}) marks the default option;</li>
 *   <li>{@link #choose}: an answer by number ({@code 2}, {@code #2}, {@code 2) because ...}) or by an
 *       option's text picks that option;</li>
 *   <li>{@link #defaultIndex}: the option whose text ends with {@code (default)}, else the first.</li>
 * </ul>
 * Numbers shown to people and typed by them are 1-based; the index returned (and kept in the
 * ledger's {@code choice}) is 0-based.
 */
public final class OptionsParser {
    /** What {@link #choose} and {@link #extract} look for at most (the same limit as the CLI's --option). */
    public static final int MAX_OPTIONS = 10;
    public static final String DEFAULT_MARK = "(default)";

    private static final Pattern ITEM = Pattern.compile("^ {0,3}(?:[-*+]|\\d{1,2}[.)])\\s+(?:\\[([ xX])\\]\\s+)?(\\S.*)$");
    private static final Pattern NUMBER = Pattern.compile(
            "^(?:option\\s+)?#?(\\d{1,2})(?:[.):]?|[.):]\\s+.*|\\s+[-:]\\s+.*)$", Pattern.CASE_INSENSITIVE | Pattern.DOTALL);
    private static final Pattern LEAD_MARK = Pattern.compile("^(?:[-*+]\\s+)?(?:\\[[ xX]\\]\\s+)?");

    private OptionsParser() {
    }

    /** A question split into its text and the options listed under it (empty when it lists none). */
    public record Extracted(String question, List<String> options) {
        public Extracted {
            options = List.copyOf(options);
        }
    }

    /**
     * Splits a question whose last lines are a Markdown list (2 to {@value #MAX_OPTIONS} items of
     * {@code -}, {@code *}, {@code +}, {@code 1.} or {@code 1)}, optionally task boxes {@code [ ]}/{@code [x]})
     * into the text above the list and the items. A list with nothing above it, a single item, more
     * than {@value #MAX_OPTIONS} items, or a list followed by more text is part of the question.
     */
    public static Extracted extract(String body) {
        String text = body == null ? "" : body.strip();
        List<String> lines = Arrays.asList(text.split("\\R", -1));
        int start = lines.size();
        List<String> items = new ArrayList<>();
        while (start > 0) {
            Matcher m = ITEM.matcher(lines.get(start - 1).stripTrailing());
            if (!m.matches()) {
                break;
            }
            String item = m.group(2).strip();
            boolean checked = m.group(1) != null && !m.group(1).isBlank();
            if (checked && !hasDefaultMark(item)) {
                item = item + " " + DEFAULT_MARK;
            }
            items.add(0, item);
            start--;
        }
        String question = String.join("\n", lines.subList(0, start)).strip();
        if (items.size() < 2 || items.size() > MAX_OPTIONS || question.isEmpty()) {
            return new Extracted(text, List.of());
        }
        return new Extracted(question, items);
    }

    /**
     * The 0-based index of the option an answer picks: a number 1..n alone or followed by
     * {@code .}, {@code )}, {@code :} or {@code -} and an explanation; or an option's text (without
     * its {@code (default)} mark, any case), alone or followed by punctuation and an explanation.
     * Empty when the answer picks none.
     */
    public static Optional<Integer> choose(List<String> options, String answer) {
        if (options == null || options.isEmpty() || answer == null) {
            return Optional.empty();
        }
        String a = LEAD_MARK.matcher(answer.strip()).replaceFirst("");
        Matcher m = NUMBER.matcher(a);
        if (m.matches()) {
            int n = Integer.parseInt(m.group(1));
            return n >= 1 && n <= options.size() ? Optional.of(n - 1) : Optional.empty();
        }
        String lower = a.toLowerCase(Locale.ROOT);
        int best = -1;
        int bestLength = -1;
        for (int i = 0; i < options.size(); i++) {
            String label = label(options.get(i)).toLowerCase(Locale.ROOT);
            if (label.isEmpty()) {
                continue;
            }
            boolean exact = lower.equals(label) || lower.equals(label + ".");
            boolean prefix = lower.startsWith(label) && lower.length() > label.length()
                    && ",.;:-(".indexOf(lower.charAt(label.length())) >= 0
                    || lower.startsWith(label + " -") || lower.startsWith(label + " (");
            if ((exact || prefix) && label.length() > bestLength) {
                best = i;
                bestLength = label.length();
            }
        }
        return best < 0 ? Optional.empty() : Optional.of(best);
    }

    /** The default option: the first whose text ends with {@code (default)}, else the first one. */
    public static int defaultIndex(List<String> options) {
        for (int i = 0; i < options.size(); i++) {
            if (hasDefaultMark(options.get(i))) {
                return i;
            }
        }
        return 0;
    }

    /** An option's text without its {@code (default)} mark. */
    public static String label(String option) {
        String o = option.strip();
        if (hasDefaultMark(o)) {
            o = o.substring(0, o.length() - DEFAULT_MARK.length()).strip();
        }
        return o;
    }

    private static boolean hasDefaultMark(String option) {
        return option.strip().toLowerCase(Locale.ROOT).endsWith(DEFAULT_MARK);
    }
}
