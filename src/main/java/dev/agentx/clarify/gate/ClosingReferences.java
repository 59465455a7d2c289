package dev.agentx.clarify.gate;

import java.util.Collections;
import java.util.Locale;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The issues a pull request's body closes, read as GitHub reads its closing keywords: {@code
 * close}, {@code closes}, {@code closed}, {@code fix}, {@code fixes}, {@code fixed}, {@code
 * resolve}, {@code resolves}, {@code resolved} in any case, an optional colon, then {@code #42},
 * {@code OWNER/REPO#42} or the issue's full URL. Only issues of the pull request's own repository
 * count: a reference to another repository closes nothing here.
 */
public final class ClosingReferences {
    /** At most this many issues are taken from one body (a body of thousands of references gates on none more). */
    public static final int MAX = 50;
    private static final Pattern REFERENCE = Pattern.compile(
            "(?<![A-Za-z0-9_])(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)[ \\t]*:?[ \\t]+"
                    + "(?:#|([A-Za-z0-9][A-Za-z0-9-]{0,38})/([A-Za-z0-9._-]{1,100})#"
                    + "|(https?://[^\\s/]+)/([A-Za-z0-9][A-Za-z0-9-]{0,38})/([A-Za-z0-9._-]{1,100})/issues/)"
                    + "([1-9][0-9]{0,8})(?![A-Za-z0-9_/])",
            Pattern.CASE_INSENSITIVE);

    private ClosingReferences() {
    }

    /**
     * The numbers of the issues of {@code owner/name} that {@code body} closes, in order; {@code
     * webHost}: the scheme and host of the repository's web pages ({@code https://github.com}),
     * which a full URL must name.
     */
    public static SortedSet<Integer> of(String body, String owner, String name, String webHost) {
        SortedSet<Integer> out = new TreeSet<>();
        if (body == null || body.isEmpty()) {
            return Collections.unmodifiableSortedSet(out);
        }
        Matcher m = REFERENCE.matcher(body);
        while (m.find() && out.size() < MAX) {
            boolean same;
            if (m.group(1) != null) {
                same = sameRepo(m.group(1), m.group(2), owner, name);
            } else if (m.group(3) != null) {
                same = m.group(3).equalsIgnoreCase(webHost) && sameRepo(m.group(4), m.group(5), owner, name);
            } else {
                same = true;
            }
            if (same) {
                out.add(Integer.parseInt(m.group(6)));
            }
        }
        return Collections.unmodifiableSortedSet(out);
    }

    /** GitHub's owner and repository names are the same whatever their case. */
    private static boolean sameRepo(String owner, String name, String wantOwner, String wantName) {
        return owner.toLowerCase(Locale.ROOT).equals(wantOwner.toLowerCase(Locale.ROOT))
                && name.toLowerCase(Locale.ROOT).equals(wantName.toLowerCase(Locale.ROOT));
    }
}
