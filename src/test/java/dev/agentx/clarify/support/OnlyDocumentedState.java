package dev.agentx.clarify.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.io.TempDir;

/**
 * After each test, every {@code .agentx/state/} under the test's {@code @TempDir} folders holds
 * only what docs/protocol.md lists under "State on disk" (its {@code state/} lines, {@code N} for
 * a number), and the runtime folder {@code .runtime/} whose contents it does not look into: what
 * a user sees with {@code ls -a} is documented. Fails naming each file that is not.
 * {@code @ExtendWith(OnlyDocumentedState.class)} on a test class.
 */
public final class OnlyDocumentedState implements AfterEachCallback {
    private static volatile List<Pattern> documented;

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        Object test = context.getRequiredTestInstance();
        for (Class<?> c = test.getClass(); c != null; c = c.getSuperclass()) {
            for (Field f : c.getDeclaredFields()) {
                if (f.isAnnotationPresent(TempDir.class) && f.getType() == Path.class) {
                    f.setAccessible(true);
                    Path dir = (Path) f.get(test);
                    if (dir != null && Files.isDirectory(dir)) {
                        assertOnlyDocumentedUnder(dir);
                    }
                }
            }
        }
    }

    /** Checks every {@code .agentx/state/} folder under {@code dir} (see the class comment). */
    public static void assertOnlyDocumentedUnder(Path dir) throws IOException {
        List<Path> states;
        try (Stream<Path> walk = Files.walk(dir)) {
            states = walk.filter(p -> p.getFileName() != null && p.getFileName().toString().equals("state")
                    && p.getParent() != null && p.getParent().getFileName() != null
                    && p.getParent().getFileName().toString().equals(".agentx") && Files.isDirectory(p)).toList();
        } catch (UncheckedIOException e) {
            throw e.getCause(); // a folder removed while walked: the test's own processes are still at work
        }
        for (Path state : states) {
            assertOnlyDocumented(state);
        }
    }

    /** Checks one state folder: every file and folder in it, but inside {@code .runtime/}, is one docs/protocol.md lists. */
    public static void assertOnlyDocumented(Path state) throws IOException {
        List<Pattern> allowed = documented();
        List<String> strays = new ArrayList<>();
        try (Stream<Path> walk = Files.walk(state)) {
            walk.filter(p -> !p.equals(state)).forEach(p -> {
                String rel = state.relativize(p).toString().replace('\\', '/');
                if (rel.equals(".runtime") || rel.startsWith(".runtime/")) {
                    return;
                }
                String name = Files.isDirectory(p) ? rel + "/" : rel;
                if (allowed.stream().noneMatch(a -> a.matcher(name).matches())) {
                    strays.add(name);
                }
            });
        }
        assertEquals(List.of(), strays, "files in " + state + " that docs/protocol.md does not list");
    }

    /**
     * The {@code state/} lines of docs/protocol.md's "State on disk" block, as patterns of paths
     * relative to the state folder (a folder ends with {@code /}; each folder a listed path is in
     * is listed too).
     */
    static List<Pattern> documented() throws IOException {
        List<Pattern> d = documented;
        if (d != null) {
            return d;
        }
        List<String> lines = Files.readAllLines(Path.of("docs/protocol.md"), StandardCharsets.UTF_8);
        int section = lines.indexOf("## State on disk");
        assertTrue(section >= 0, "docs/protocol.md has no section 'State on disk'");
        List<Pattern> out = new ArrayList<>();
        int open = section + 1;
        while (open < lines.size() && !lines.get(open).startsWith("```")) {
            open++;
        }
        boolean inState = false;
        int indent = -1;
        for (int i = open + 1; i < lines.size() && !lines.get(i).startsWith("```"); i++) {
            String line = lines.get(i);
            if (line.strip().equals("state/")) {
                inState = true;
                continue;
            }
            if (!inState || line.isBlank()) {
                continue;
            }
            int at = line.length() - line.stripLeading().length();
            if (indent < 0) {
                indent = at;
            }
            if (at != indent) {
                continue; // the comment of the line above, continued
            }
            String path = line.strip().split("\\s+")[0];
            StringBuilder prefix = new StringBuilder();
            for (String part : path.split("(?<=/)")) {
                prefix.append(part);
                // N (a word of its own) is a number: issue-N.json
                out.add(Pattern.compile(Pattern.quote(prefix.toString()).replaceAll("(?<![A-Za-z])N(?![A-Za-z])",
                        "\\\\E\\\\d+\\\\Q")));
            }
        }
        assertTrue(out.size() > 3, "docs/protocol.md lists no state/ files: " + out);
        documented = List.copyOf(out);
        return documented;
    }
}
