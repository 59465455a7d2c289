package dev.agentx.clarify.gate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.SortedSet;
import org.junit.jupiter.api.Test;

/** GitHub's closing keywords in a pull request's body, and what they do not close. */
class ClosingReferencesTest {
    private static List<Integer> closes(String body) {
        SortedSet<Integer> s = ClosingReferences.of(body, "Codertocat", "Hello-World", "https://github.com");
        return List.copyOf(s);
    }

    @Test
    void everyKeywordInAnyCaseWithOrWithoutAColon() {
        assertEquals(List.of(1, 2, 3, 4, 5, 6, 7, 8, 9), closes("close #1\nCloses #2\nCLOSED #3\nfix #4, Fixes: #5\n"
                + "fixed #6. resolve #7 (resolves #8) and Resolved:  #9"));
    }

    @Test
    void theSameRepositoryByNameOrUrlCountsAnotherDoesNot() {
        assertEquals(List.of(42, 43, 44), closes("Fixes codertocat/hello-world#42, closes "
                + "https://github.com/Codertocat/Hello-World/issues/43 and resolves Codertocat/Hello-World#44; "
                + "fixes octo/other#45, fixes https://github.com/octo/other/issues/46, "
                + "fixes https://evil.example/Codertocat/Hello-World/issues/47"));
    }

    @Test
    void wordsThatOnlyLookLikeKeywordsCloseNothing() {
        assertEquals(List.of(), closes("prefixes #1, unfixed #2, fixes#3, fixes #4abc, fix #0, see #5, closes # 6, "
                + "fixes https://github.com/Codertocat/Hello-World/pull/7"));
        assertEquals(List.of(), closes(null));
    }

    @Test
    void atMostFiftyIssuesAreTakenFromOneBody() {
        StringBuilder b = new StringBuilder();
        for (int i = 1; i <= 80; i++) {
            b.append("fixes #").append(i).append('\n');
        }
        assertEquals(ClosingReferences.MAX, closes(b.toString()).size());
    }
}
