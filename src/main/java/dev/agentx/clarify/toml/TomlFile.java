package dev.agentx.clarify.toml;

import dev.agentx.clarify.protocol.Autonomy;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.tomlj.Toml;
import org.tomlj.TomlArray;
import org.tomlj.TomlParseError;
import org.tomlj.TomlParseResult;
import org.tomlj.TomlPosition;
import org.tomlj.TomlTable;

/**
 * A parsed TOML document that reports every problem as "file, line N: field 'x' ..." so a user
 * can find and fix it. Shared by the workflow and config loaders.
 */
public final class TomlFile {
    private final String name;
    private final TomlParseResult doc;
    private final String keyPrefix;

    private TomlFile(String name, TomlParseResult doc, String keyPrefix) {
        this.name = name;
        this.doc = doc;
        this.keyPrefix = keyPrefix;
    }

    /**
     * The same document whose messages show every key with {@code prefix} in front (e.g.
     * {@code workflows.hotfix.}), for a table nested in the file that a loader reads as if it were
     * a file of its own.
     */
    public TomlFile scoped(String prefix) {
        return new TomlFile(name, doc, prefix);
    }

    /** Parses the text; a syntax error throws VALIDATION naming the file and line. */
    public static TomlFile parse(String name, String text) {
        TomlParseResult result = Toml.parse(text);
        if (result.hasErrors()) {
            TomlParseError first = result.errors().get(0);
            TomlPosition p = first.position();
            throw new ClarifyException(ErrorCode.VALIDATION, name + ", line " + (p == null ? "?" : p.line())
                    + ": invalid TOML: " + first.getMessage());
        }
        return new TomlFile(name, result, "");
    }

    public String name() {
        return name;
    }

    public TomlTable root() {
        return doc;
    }

    public ClarifyException error(TomlTable table, String key, String problem) {
        TomlPosition p = table == null ? null : table.inputPositionOf(key);
        String line = p == null ? "" : ", line " + p.line();
        return new ClarifyException(ErrorCode.VALIDATION, name + line + ": field '" + keyPrefix + key + "' " + problem);
    }

    /** An optional {@code autonomy = "full" | "notify" | "approve"}; null when absent. */
    public Autonomy autonomy(TomlTable table) {
        String value = string(table, "autonomy", null);
        if (value == null) {
            return null;
        }
        if (!Autonomy.isValid(value)) {
            throw error(table, "autonomy", "must be full, notify or approve, got '" + value + "'");
        }
        return Autonomy.fromWire(value);
    }

    /** Rejects any key not in {@code allowed}: a typo must not silently change behaviour. */
    public void onlyKeys(TomlTable table, String where, Set<String> allowed) {
        for (String key : table.keySet()) {
            if (!allowed.contains(key)) {
                throw error(table, key, "is not a known key" + (where.isEmpty() ? "" : " in " + where)
                        + "; known keys: " + new TreeSet<>(allowed));
            }
        }
    }

    public String string(TomlTable t, String key, String fallback) {
        if (!t.contains(key)) {
            return fallback;
        }
        Object v = t.get(key);
        if (!(v instanceof String s)) {
            throw error(t, key, "must be a string, got " + typeName(v));
        }
        return s;
    }

    public String requiredString(TomlTable t, String key, String where) {
        if (!t.contains(key)) {
            TomlPosition p = positionOf(t);
            throw new ClarifyException(ErrorCode.VALIDATION, name + (p == null ? "" : ", line " + p.line())
                    + ": field '" + keyPrefix + key + "' is required in " + where);
        }
        String s = string(t, key, null);
        if (s.isBlank()) {
            throw error(t, key, "must not be empty");
        }
        return s;
    }

    public Integer integer(TomlTable t, String key, long min, long max) {
        if (!t.contains(key)) {
            return null;
        }
        Object v = t.get(key);
        if (!(v instanceof Long l)) {
            throw error(t, key, "must be an integer, got " + typeName(v));
        }
        if (l < min || l > max) {
            throw error(t, key, "must be between " + min + " and " + max + ", got " + l);
        }
        return l.intValue();
    }

    public Boolean bool(TomlTable t, String key) {
        if (!t.contains(key)) {
            return null;
        }
        Object v = t.get(key);
        if (!(v instanceof Boolean b)) {
            throw error(t, key, "must be true or false, got " + typeName(v));
        }
        return b;
    }

    public List<String> strings(TomlTable t, String key) {
        if (!t.contains(key)) {
            return null;
        }
        Object v = t.get(key);
        if (!(v instanceof TomlArray a)) {
            throw error(t, key, "must be an array of strings, like [\"a\", \"b\"], got " + typeName(v));
        }
        List<String> out = new ArrayList<>();
        for (int i = 0; i < a.size(); i++) {
            Object item = a.get(i);
            if (!(item instanceof String s)) {
                throw error(t, key, "must be an array of strings; item " + (i + 1) + " is " + typeName(item));
            }
            out.add(s);
        }
        return out;
    }

    public TomlTable table(TomlTable t, String key) {
        if (!t.contains(key)) {
            return null;
        }
        Object v = t.get(key);
        if (!(v instanceof TomlTable tt)) {
            throw error(t, key, "must be a table ([" + key + "]), got " + typeName(v));
        }
        return tt;
    }

    private TomlPosition positionOf(TomlTable t) {
        for (String k : t.keySet()) {
            TomlPosition p = t.inputPositionOf(k);
            if (p != null) {
                return p;
            }
        }
        return null;
    }

    public static String typeName(Object v) {
        if (v == null) {
            return "nothing";
        }
        if (v instanceof String) {
            return "a string";
        }
        if (v instanceof Long) {
            return "an integer";
        }
        if (v instanceof Double) {
            return "a float";
        }
        if (v instanceof Boolean) {
            return "a boolean";
        }
        if (v instanceof TomlArray) {
            return "an array";
        }
        if (v instanceof TomlTable) {
            return "a table";
        }
        return "a " + v.getClass().getSimpleName();
    }
}
