package dev.agentx.clarify.github;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

/** A repository's owner and name are checked so they are safe in a path, as GitHub allows them. */
class RepoRefTest {
    @Test
    void namesGitHubAllowsAreTakenAsTheyAre() {
        assertEquals("Codertocat/Hello-World", new RepoRef("Codertocat", "Hello-World").fullName());
        assertEquals("a/b.c_d-e", RepoRef.parse("a/b.c_d-e").fullName());
        assertEquals("o/" + "n".repeat(100), new RepoRef("o", "n".repeat(100), 7).fullName());
        assertEquals("7", new RepoRef("o", "r", 7).stateKey());
    }

    @Test
    void anythingElseIsRefusedNamingIt() {
        for (String[] bad : new String[][] {{"", "r"}, {"o", ""}, {"o", ".."}, {"o", ".hidden"}, {"..", "r"},
            {"o", "a/b"}, {"o", "r."}, {"o", "r\n"}, {"o", "n".repeat(101)}, {"o w", "r"}, {null, "r"}, {"o", null}}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new RepoRef(bad[0], bad[1]),
                    bad[0] + "/" + bad[1]);
            assertEquals("not a GitHub repository name: '" + bad[0] + "/" + bad[1] + "'", e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> RepoRef.parse("no-slash"));
        assertThrows(IllegalArgumentException.class, () -> new RepoRef("o", "r", -1));
    }
}
