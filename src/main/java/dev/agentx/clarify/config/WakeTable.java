package dev.agentx.clarify.config;

import dev.agentx.clarify.protocol.Roles;
import dev.agentx.clarify.toml.TomlFile;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;
import org.tomlj.TomlTable;

/**
 * {@code [wake]}: a role's mention that starts its agent again ({@code engineer = "@copilot"}). The
 * App puts it, as written here, at the end of each comment that settles a question of that role
 * (docs/github-app.md, "Waking the asker"). Each value must be one GitHub mention, {@code @login} or
 * {@code @org/team}, and nothing else: the mention goes into the App's comments outside the quoting
 * that neutralises user text, so it must be unable to carry markup, a second line or a command.
 */
public final class WakeTable {
    /** A GitHub login: letters, digits and single hyphens, not at either end, at most 39 characters. */
    private static final String LOGIN = "[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}";
    /** {@code @login} or {@code @org/team-slug}. */
    public static final Pattern MENTION = Pattern.compile("@" + LOGIN + "(?:/[A-Za-z0-9][A-Za-z0-9_-]{0,99})?");
    /** A role's name, as the comment commands read one. */
    private static final String ROLE = "[A-Za-z0-9][A-Za-z0-9_.-]*";

    private WakeTable() {
    }

    /** The file's {@code [wake]}, role by role (canonical names); empty when it has none. */
    public static Map<String, String> read(TomlFile toml, TomlTable root) {
        Map<String, String> wake = new LinkedHashMap<>();
        TomlTable t = toml.table(root, "wake");
        if (t == null) {
            return wake;
        }
        TomlFile scoped = toml.scoped("wake.");
        for (String role : t.keySet()) {
            if (!role.matches(ROLE)) {
                throw scoped.error(t, role, "is not a role name: use letters, digits, '.', '_' and '-'");
            }
            String mention = scoped.string(t, role, null).strip();
            if (!MENTION.matcher(mention).matches()) {
                throw scoped.error(t, role, "must be one GitHub mention, \"@login\" or \"@org/team\" (for example "
                        + "\"@copilot\" or \"@claude\"), got '" + printable(mention) + "'");
            }
            if (wake.put(Roles.canonical(role), mention) != null) {
                throw scoped.error(t, role, "names the role '" + Roles.canonical(role) + "' a second time (an alias "
                        + "and its role are one); keep one of the two");
            }
        }
        return wake;
    }

    /** The login a mention names ({@code copilot} of {@code @copilot}); null for a team's. */
    public static String login(String mention) {
        return mention == null || mention.indexOf('/') >= 0 ? null : mention.substring(1);
    }

    /** The text as an error message may quote it: control characters shown as escapes, at most 60 characters. */
    static String printable(String s) {
        StringBuilder b = new StringBuilder();
        s.codePoints().limit(60).forEach(c -> {
            if (c < 0x20 || c == 0x7f) {
                b.append(String.format("\\u%04x", c));
            } else {
                b.appendCodePoint(c);
            }
        });
        return s.codePointCount(0, s.length()) > 60 ? b + "..." : b.toString();
    }
}
