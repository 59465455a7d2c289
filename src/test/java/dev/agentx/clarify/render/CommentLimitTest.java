package dev.agentx.clarify.render;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;

class CommentLimitTest {
    @Test
    void shortTextIsLeftAsItIs() {
        assertEquals("hello", CommentLimit.cut("hello", 10));
        assertEquals("a\n<!-- agentx:{} -->", CommentLimit.fit("a\n<!-- agentx:{} -->", 100));
    }

    @Test
    void longTextIsCutWithANoteOfWhatWasLeftOut() {
        String text = "x".repeat(70_000);
        String cut = CommentLimit.cut(text, 1_000);
        assertTrue(cut.length() <= 1_000, "length " + cut.length());
        int shown = cut.indexOf('\n');
        assertTrue(cut.endsWith("*[... " + String.format("%,d", 70_000 - shown) + " more characters not shown]*"), cut);
    }

    @Test
    void theTrailingMarkerIsKeptWholeAndTheTextBeforeItIsCut() {
        String marker = "\n<!-- agentx:{\"id\":\"CLR-1-001\",\"round\":1,\"kind\":\"question\"} -->";
        String body = "**Clarification CLR-1-001**\n\n> " + "y".repeat(80_000) + "\n" + marker;
        String fitted = CommentLimit.fit(body, CommentLimit.MAX);
        assertTrue(fitted.length() <= CommentLimit.MAX, "length " + fitted.length());
        assertTrue(fitted.endsWith(marker), "the marker is whole and last");
        assertTrue(fitted.contains("more characters not shown"));
        assertTrue(fitted.startsWith("**Clarification CLR-1-001**"));
    }

    @Test
    void aCharacterOutsideTheBasicPlaneIsNeverSplit() {
        String text = "\uD83D\uDE00".repeat(1_000);
        String cut = CommentLimit.cut(text, 101);
        String kept = cut.substring(0, cut.indexOf('\n'));
        assertTrue(kept.codePoints().allMatch(cp -> cp == 0x1F600), "only whole emoji: " + kept.length());
    }

    @Test
    void aCharacterReferenceTheRendererWroteIsNeverSplit() {
        String text = "@&#8203;x &lt;b&gt; &#x1F600; &amp; ".repeat(500);
        for (int max = 200; max < 240; max++) {
            String cut = CommentLimit.cut(text, max);
            assertTrue(cut.length() <= max, "length " + cut.length());
            String kept = cut.substring(0, cut.indexOf('\n'));
            assertFalse(kept.matches("(?s).*&#?[0-9A-Za-z]*"), "a reference cut in half at " + max + ": " + kept);
            String note = cut.substring(kept.length());
            assertEquals("\n\n*[... " + String.format("%,d", text.length() - kept.length())
                    + " more characters not shown]*", note);
        }
    }

    @Property
    void everyFittedBodyFits(@ForAll @StringLength(max = 3_000) String text, @ForAll @IntRange(min = 60, max = 2_000) int max) {
        assertTrue(CommentLimit.cut(text, max).length() <= max);
        String body = text + "\n<!-- agentx:{} -->";
        String fitted = CommentLimit.fit(body, max);
        assertTrue(fitted.length() <= Math.max(max, "\n<!-- agentx:{} -->".length()), fitted.length() + " > " + max);
    }
}
