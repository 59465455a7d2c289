package dev.agentx.clarify.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ShortenTest {
    private static final String EMOJI = "\uD83D\uDE00";

    @Test
    void textWithinTheLimitIsLeftAsItIsCountingCodePoints() {
        assertEquals("hello", Shorten.to("hello", 5));
        String emoji = EMOJI.repeat(300); // 600 UTF-16 units, 300 characters
        assertEquals(emoji, Shorten.to(emoji, 300));
    }

    @Test
    void longerTextKeepsItsFirstCharactersAndEndsInDots() {
        assertEquals("abcd...", Shorten.to("abcdefgh", 7));
        assertEquals("x".repeat(296) + EMOJI + "...", Shorten.to("x".repeat(296) + EMOJI + "y".repeat(10), 300));
    }

    @Test
    void theEndKeepsItsLastCharactersAfterDots() {
        assertEquals("abcdefgh", Shorten.toEnd("abcdefgh", 8));
        assertEquals("...efgh", Shorten.toEnd("abcdefgh", 7));
        assertEquals("..." + EMOJI + "y".repeat(10), Shorten.toEnd("x".repeat(296) + EMOJI + "y".repeat(10), 14));
    }

    @Test
    void aSurrogatePairIsNeverSplitWhereverTheCutFalls() {
        for (int lead = 0; lead < 8; lead++) {
            String text = "x".repeat(lead) + EMOJI.repeat(20);
            for (int max = 3; max < 30; max++) {
                String s = max % 2 == 0 ? Shorten.to(text, max) : Shorten.toEnd(EMOJI.repeat(20) + "x".repeat(lead), max);
                assertTrue(s.codePointCount(0, s.length()) <= max, s);
                assertTrue(s.codePoints().noneMatch(cp -> cp >= Character.MIN_SURROGATE && cp <= Character.MAX_SURROGATE),
                        "a lone surrogate in the cut of " + lead + " leading characters at " + max);
            }
        }
    }
}
