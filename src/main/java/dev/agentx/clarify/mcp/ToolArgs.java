package dev.agentx.clarify.mcp;

import dev.agentx.clarify.protocol.ClarificationId;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Shorten;
import dev.agentx.clarify.routing.Validation;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * A tool call's arguments, checked against what the tool takes. A missing, unknown or mistyped
 * argument is a {@code USAGE} error naming the argument and what it must be, as picocli's usage
 * errors do for the CLI; what the engine then checks (lengths, roles, scope) keeps its own codes.
 * Numbers and booleans written as strings ("42", "true") are taken: models often quote them.
 */
final class ToolArgs {
    private static final int MAX_ISSUE = 999_999_999;

    private final String tool;
    private final Map<String, Object> values;

    ToolArgs(String tool, Map<String, Object> values, Set<String> known) {
        this.tool = tool;
        this.values = values == null ? Map.of() : values;
        TreeSet<String> unknown = new TreeSet<>(this.values.keySet());
        unknown.removeAll(known);
        if (!unknown.isEmpty()) {
            throw usage("unknown argument" + (unknown.size() > 1 ? "s " : " ") + quoted(unknown)
                    + "; it takes " + (known.isEmpty() ? "no arguments" : quoted(new TreeSet<>(known))) + ".");
        }
    }

    /** A required text argument that is not blank. */
    String text(String name) {
        String v = optionalText(name);
        if (v == null) {
            throw usage("argument '" + name + "' is required.");
        }
        return v;
    }

    /** A text argument, or null if absent. An empty string counts as given (the engine judges it). */
    String optionalText(String name) {
        Object v = values.get(name);
        if (v == null) {
            return null;
        }
        if (v instanceof String s) {
            return s;
        }
        throw usage("argument '" + name + "' must be a string, got " + describe(v) + ".");
    }

    int integer(String name, int min, int max) {
        Integer v = optionalInteger(name, min, max);
        if (v == null) {
            throw usage("argument '" + name + "' is required.");
        }
        return v;
    }

    /** A whole number from {@code min} to {@code max}; {@code Integer.MIN_VALUE}: no lower end here (the caller checks it). */
    Integer optionalInteger(String name, int min, int max) {
        Object v = values.get(name);
        if (v == null) {
            return null;
        }
        BigDecimal number = null;
        if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte) {
            number = BigDecimal.valueOf(((Number) v).longValue());
        } else if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            number = Double.isFinite(d) ? BigDecimal.valueOf(d) : null;
        } else if (v instanceof BigDecimal b) {
            number = b;
        } else if (v instanceof java.math.BigInteger b) {
            number = new BigDecimal(b);
        } else if (v instanceof String s && s.strip().matches("[+-]?\\d{1,18}")) {
            number = new BigDecimal(s.strip());
        }
        String range = min == Integer.MIN_VALUE ? "up to " + max : "from " + min + " to " + max;
        if (number == null || number.stripTrailingZeros().scale() > 0) {
            throw usage("argument '" + name + "' must be a whole number " + range + ", got " + describe(v) + ".");
        }
        if (number.compareTo(BigDecimal.valueOf(min)) < 0 || number.compareTo(BigDecimal.valueOf(max)) > 0) {
            throw usage("argument '" + name + "' must be " + (min == Integer.MIN_VALUE ? "at most " + max
                    : "from " + min + " to " + max) + ", got " + number.toPlainString() + ".");
        }
        return number.intValueExact();
    }

    boolean bool(String name, boolean fallback) {
        Object v = values.get(name);
        if (v == null) {
            return fallback;
        }
        if (v instanceof Boolean b) {
            return b;
        }
        if (v instanceof String s && (s.equalsIgnoreCase("true") || s.equalsIgnoreCase("false"))) {
            return Boolean.parseBoolean(s);
        }
        throw usage("argument '" + name + "' must be true or false, got " + describe(v) + ".");
    }

    /** A list of strings; absent is empty. */
    List<String> texts(String name) {
        Object v = values.get(name);
        if (v == null) {
            return List.of();
        }
        if (v instanceof List<?> list) {
            List<String> out = new ArrayList<>();
            for (Object o : list) {
                if (!(o instanceof String s)) {
                    throw usage("argument '" + name + "' must be an array of strings; item " + (out.size() + 1)
                            + " is " + describe(o) + ".");
                }
                out.add(s);
            }
            return out;
        }
        throw usage("argument '" + name + "' must be an array of strings, got " + describe(v) + ".");
    }

    /** The issue argument: one under 1 is refused as the engine and the CLI refuse it (VALIDATION), not as a bad argument. */
    int issue() {
        return Validation.issue(integer("issue", Integer.MIN_VALUE, MAX_ISSUE));
    }

    /** The clarification id argument, in its canonical form ({@code CLR-42-001}); VALIDATION when it is none. */
    String id() {
        return ClarificationId.parse(text("id")).toString();
    }

    /** The optional {@code wait_seconds}: 0 (return at once) when absent. */
    int waitSeconds() {
        Integer w = optionalInteger("wait_seconds", 0, ToolCatalogue.MAX_WAIT_SECONDS);
        return w == null ? 0 : w;
    }

    boolean has(String name) {
        return values.get(name) != null;
    }

    ClarifyException usage(String message) {
        return new ClarifyException(ErrorCode.USAGE, tool + ": " + message);
    }

    private static String quoted(Set<String> names) {
        StringBuilder b = new StringBuilder();
        for (String n : names) {
            if (b.length() > 0) {
                b.append(", ");
            }
            b.append('\'').append(n).append('\'');
        }
        return b.toString();
    }

    private static String describe(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof String s) {
            return "the string \"" + Shorten.to(s, 40) + "\"";
        }
        if (v instanceof List) {
            return "an array";
        }
        if (v instanceof Map) {
            return "an object";
        }
        if (v instanceof Boolean) {
            return v.toString();
        }
        if (v instanceof Number) {
            return v.toString();
        }
        return "a " + v.getClass().getSimpleName();
    }
}
