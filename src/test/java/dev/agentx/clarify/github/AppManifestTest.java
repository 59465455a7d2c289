package dev.agentx.clarify.github;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** app-manifest.yml names what GitHub Mode needs: its permissions, events and webhook path. */
class AppManifestTest {
    @Test
    void manifestAsksForExactlyWhatTheServerUses() throws Exception {
        List<String> lines = Files.readAllLines(Path.of("app-manifest.yml"));
        Map<String, String> values = new LinkedHashMap<>();
        String section = "";
        for (String line : lines) {
            if (line.isBlank() || line.strip().startsWith("#")) {
                continue;
            }
            if (!line.startsWith(" ")) {
                int colon = line.indexOf(':');
                section = line.substring(0, colon);
                String value = line.substring(colon + 1).strip();
                if (!value.isEmpty()) {
                    values.put(section, value);
                }
            } else {
                String item = line.strip();
                int colon = item.indexOf(':');
                values.merge(section + (colon > 0 && !item.startsWith("-") ? "." + item.substring(0, colon) : ""),
                        colon > 0 && !item.startsWith("-") ? item.substring(colon + 1).strip() : item.substring(2),
                        (a, b) -> a + "," + b);
            }
        }
        for (String key : List.of("name", "url", "redirect_url", "public")) {
            assertTrue(values.containsKey(key), key + " in " + values);
        }
        assertTrue(values.get("hook_attributes.url").endsWith(GitHubSettings.DEFAULT_PATH));
        assertEquals("write", values.get("default_permissions.issues"));
        assertEquals("read", values.get("default_permissions.metadata"));
        assertEquals("read", values.get("default_permissions.members"));
        assertEquals("issue_comment,issues", values.get("default_events"));
    }
}
