package dev.agentx.clarify.github;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code $AGENTX_DATA_DIR/agentx.env}: the server's variables as {@code NAME=value} lines, written by
 * {@code agentx setup} and read by {@code agentx serve} at start. Blank lines and {@code #} comments
 * are allowed; a value may be wrapped in double or single quotes, which are removed; nothing is
 * expanded. A variable set in the real environment wins over the file, as a shell {@code export}
 * would. The file locates itself, so it cannot set {@code AGENTX_DATA_DIR}.
 */
public final class EnvFile {
    public static final String NAME = "agentx.env";
    private static final Pattern VARIABLE = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    /** An upper-case name with an underscore or of at most 20 characters: a variable's, not a key's text. */
    private static final Pattern SHOWN_NAME = Pattern.compile("[A-Z][A-Z0-9]*_[A-Z0-9_]*|[A-Z][A-Z0-9]{0,19}(?![A-Za-z0-9])");

    private EnvFile() {
    }

    /** The environment with the data dir's file merged under it, and which names came from the file. */
    public record Merged(Map<String, String> env, Path file, List<String> fromFile) {
        public Merged {
            env = Map.copyOf(env);
            fromFile = List.copyOf(fromFile);
        }
    }

    /** The data dir as {@code agentx serve} resolves it: {@code AGENTX_DATA_DIR}, else {@code ./agentx-data}. */
    public static Path dataDir(Map<String, String> env, Path cwd) {
        String data = env.get("AGENTX_DATA_DIR");
        return cwd.resolve(data == null || data.isBlank() ? "agentx-data" : data.strip()).toAbsolutePath().normalize();
    }

    /**
     * {@code env} with the values of the data dir's {@code agentx.env} for the names {@code env}
     * lacks; a relative {@code GITHUB_APP_PRIVATE_KEY_FILE} there is resolved against the data dir.
     *
     * @throws IllegalArgumentException naming the file and line of a malformed line
     */
    public static Merged merge(Map<String, String> env, Path cwd) {
        Path file = dataDir(env, cwd).resolve(NAME);
        if (!Files.isRegularFile(file)) {
            return new Merged(env, null, List.of());
        }
        Map<String, String> values;
        try {
            values = parse(file.toString(), Files.readString(file, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IllegalArgumentException(file + " cannot be read: " + e.getMessage(), e);
        }
        Map<String, String> merged = new LinkedHashMap<>(env);
        List<String> used = new ArrayList<>();
        // the key is one setting in two forms: the environment's form wins over either of the file's
        boolean keyInEnv = env.containsKey("GITHUB_APP_PRIVATE_KEY") || env.containsKey("GITHUB_APP_PRIVATE_KEY_FILE");
        values.forEach((name, value) -> {
            boolean key = name.equals("GITHUB_APP_PRIVATE_KEY") || name.equals("GITHUB_APP_PRIVATE_KEY_FILE");
            if (!env.containsKey(name) && !(key && keyInEnv)) {
                if (name.equals("GITHUB_APP_PRIVATE_KEY_FILE")) {
                    value = file.getParent().resolve(value).toString();
                }
                merged.put(name, value);
                used.add(name);
            }
        });
        return new Merged(merged, file, used);
    }

    /**
     * What an error may show of a malformed line: the name it starts with, if it starts with an
     * upper-case variable name followed by something other than {@code =} (a colon, a space); a
     * line of a key or a token shows nothing.
     */
    private static String shownOf(String line) {
        Matcher m = SHOWN_NAME.matcher(line);
        return m.lookingAt() && m.end() < line.length() ? ", got '" + m.group() + "' followed by '"
                + line.charAt(m.end()) + "'" : "";
    }

    /**
     * A warning when {@code file}, which holds the App's secrets, can be read by any user or
     * changed by its group: anyone who can change agentx.env can point {@code GITHUB_API_URL}
     * elsewhere and collect the App's tokens. Empty where the file system has no POSIX modes.
     */
    public static Optional<String> openToOthers(Path file, String what) {
        try {
            Set<PosixFilePermission> p = Files.getPosixFilePermissions(file);
            if (p.contains(PosixFilePermission.OTHERS_READ) || p.contains(PosixFilePermission.OTHERS_WRITE)
                    || p.contains(PosixFilePermission.GROUP_WRITE)) {
                return Optional.of(what + " " + file + " is open to other users (" + PosixFilePermissions.toString(p)
                        + ") though it holds the App's secrets: chmod 600 it (440 where a group must read it)");
            }
        } catch (UnsupportedOperationException | java.io.IOException e) {
            // no POSIX modes here, or gone since: nothing to say
        }
        return Optional.empty();
    }

    /** The variables of a file's text, in order. */
    public static Map<String, String> parse(String source, String text) {
        Map<String, String> values = new LinkedHashMap<>();
        List<String> lines = text.lines().toList();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            if (line.startsWith("export ")) {
                line = line.substring("export ".length()).strip();
            }
            int eq = line.indexOf('=');
            String name = eq < 0 ? line : line.substring(0, eq).strip();
            String where = source + ", line " + (i + 1) + ": ";
            if (eq < 0 || !VARIABLE.matcher(name).matches()) {
                throw new IllegalArgumentException(where + "expected NAME=value" + shownOf(line)
                        + " (the rest of the line is not shown: it may hold a secret). A value on several lines, "
                        + "like a PEM key, does not fit here: use GITHUB_APP_PRIVATE_KEY_FILE, or write its line "
                        + "breaks as \\n");
            }
            if (name.equals("AGENTX_DATA_DIR")) {
                throw new IllegalArgumentException(where + "AGENTX_DATA_DIR cannot be set here: this file is found "
                        + "through it; set it in the environment instead");
            }
            String value = line.substring(eq + 1).strip();
            if (value.length() >= 2 && (value.startsWith("\"") && value.endsWith("\"")
                    || value.startsWith("'") && value.endsWith("'"))) {
                value = value.substring(1, value.length() - 1);
            }
            values.put(name, value);
        }
        return values;
    }
}
