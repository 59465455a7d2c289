package dev.agentx.clarify.routing;

import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.util.List;

/** Input rules of docs/protocol.md. */
public final class Validation {
    public static final int MAX_TOPIC = 200;
    public static final int MAX_TEXT = 2000;
    public static final int MAX_OPTIONS = 10;

    private Validation() {
    }

    public static int issue(int issue) {
        if (issue < 1) {
            throw new ClarifyException(ErrorCode.VALIDATION, "Issue number must be a positive integer, got "
                    + issue + ".");
        }
        return issue;
    }

    /**
     * The option an answer picks as people count it, from 1 (the CLI's {@code --choice}, the MCP
     * tool's {@code choice}, named {@code name} in the message), as the 0-based index the engine
     * takes; null stays null.
     */
    public static Integer choice(String name, Integer fromOne) {
        if (fromOne == null) {
            return null;
        }
        if (fromOne < 1) {
            throw new ClarifyException(ErrorCode.VALIDATION, name + " counts options from 1, got " + fromOne + ".");
        }
        return fromOne - 1;
    }

    /** Question, answer, note: 1..2000 characters after trimming. */
    public static String text(String what, String value) {
        String v = value == null ? "" : value.strip();
        if (v.isEmpty()) {
            throw new ClarifyException(ErrorCode.VALIDATION, "The " + what + " is empty: write 1 to " + MAX_TEXT
                    + " characters.");
        }
        int n = v.codePointCount(0, v.length());
        if (n > MAX_TEXT) {
            throw new ClarifyException(ErrorCode.VALIDATION, "The " + what + " is " + n + " characters long; the limit is "
                    + MAX_TEXT + ". Shorten it or split it into follow-ups.");
        }
        return v;
    }

    /** Optional note or reason: null when absent, else 1..2000 characters. */
    public static String optionalText(String what, String value) {
        return value == null || value.isBlank() ? null : text(what, value);
    }

    /** Topic: one line, 1..200 characters. */
    public static String topic(String value) {
        String v = value == null ? "" : value.strip();
        if (v.isEmpty()) {
            throw new ClarifyException(ErrorCode.VALIDATION, "The topic is empty: write 1 to " + MAX_TOPIC
                    + " characters, or leave --topic out to derive it from the question.");
        }
        if (v.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
            throw new ClarifyException(ErrorCode.VALIDATION, "The topic must be a single line without control characters.");
        }
        int n = v.codePointCount(0, v.length());
        if (n > MAX_TOPIC) {
            throw new ClarifyException(ErrorCode.VALIDATION, "The topic is " + n + " characters long; the limit is "
                    + MAX_TOPIC + ".");
        }
        return v;
    }

    /**
     * A topic derived from the question: its first line that says something (a letter or a digit)
     * outside code fences, since a question may open with its code; in a question that is all code,
     * its first such line of code. Cut at 80 characters.
     */
    public static String deriveTopic(String question) {
        String text = null;
        String code = null;
        boolean fenced = false;
        for (String line : (Iterable<String>) question.strip().lines().map(String::strip)::iterator) {
            if (line.startsWith("```") || line.startsWith("~~~")) {
                fenced = !fenced;
            } else if (line.codePoints().anyMatch(Character::isLetterOrDigit)) {
                if (!fenced) {
                    text = line;
                    break;
                }
                code = code == null ? line : code;
            }
        }
        String first = (text != null ? text : code != null ? code : "").replaceAll("\\p{Cntrl}", " ");
        if (first.codePointCount(0, first.length()) > 80) {
            first = first.substring(0, first.offsetByCodePoints(0, 77)).stripTrailing() + "...";
        }
        return first.isEmpty() ? "clarification" : first;
    }

    public static List<String> options(List<String> options) {
        if (options.size() > MAX_OPTIONS) {
            throw new ClarifyException(ErrorCode.VALIDATION, "At most " + MAX_OPTIONS + " options are allowed, got "
                    + options.size() + ".");
        }
        return options.stream().map(o -> {
            String v = o == null ? "" : o.strip();
            if (v.isEmpty() || v.codePointCount(0, v.length()) > MAX_TOPIC || v.contains("\n")) {
                throw new ClarifyException(ErrorCode.VALIDATION, "Each option must be one line of 1 to " + MAX_TOPIC
                        + " characters.");
            }
            return v;
        }).toList();
    }
}
