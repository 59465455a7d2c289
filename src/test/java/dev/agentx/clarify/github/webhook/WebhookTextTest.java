package dev.agentx.clarify.github.webhook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The acknowledgement's checks of a body's encoding and its Server-Timing header. */
class WebhookTextTest {
    /** What the JDK's decoder says of the whole body at once. */
    private static boolean decodesWhole(byte[] body) {
        try {
            StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(body));
            return true;
        } catch (CharacterCodingException e) {
            return false;
        }
    }

    private static byte[] join(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    private static byte[] bytes(int... values) {
        byte[] out = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = (byte) values[i];
        }
        return out;
    }

    @Test
    void aBodyLongerThanTheBufferIsCheckedWholeAcrossItsChunks() {
        // multi-byte characters across every chunk boundary: 2, 3 and 4 bytes (a surrogate pair)
        byte[] valid = "{\"zen\":\"\u00e9\u20ac\ud83d\ude00\"}".repeat(2_000).getBytes(StandardCharsets.UTF_8);
        assertTrue(WebhookServer.validUtf8(valid));
        assertTrue(WebhookServer.validUtf8(new byte[0]));
        assertFalse(WebhookServer.validUtf8(join(valid, bytes(0xFF))), "a stray byte after many chunks");
        assertFalse(WebhookServer.validUtf8(join(valid, bytes(0xE2, 0x82))), "a sequence cut at the end");
        assertFalse(WebhookServer.validUtf8(join(valid, bytes(0xED, 0xA0, 0x80), valid)), "an encoded surrogate");
        assertFalse(WebhookServer.validUtf8(join(valid, bytes(0xC0, 0xAF), valid)), "an overlong sequence");
    }

    @Test
    void itAgreesWithTheDecoderOfTheWholeBody() {
        Random random = new Random(42);
        byte[][] pieces = {"a".getBytes(StandardCharsets.UTF_8), "\u00e9".getBytes(StandardCharsets.UTF_8),
            "\u20ac".getBytes(StandardCharsets.UTF_8), "\ud83d\ude00".getBytes(StandardCharsets.UTF_8),
            bytes(0xFF), bytes(0xC3), bytes(0xE2, 0x82), bytes(0xED, 0xB0, 0x80), bytes(0x80)};
        for (int round = 0; round < 2_000; round++) {
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            int length = random.nextInt(6_000);
            boolean broken = random.nextInt(4) == 0;
            while (body.size() < length) {
                body.writeBytes(pieces[random.nextInt(broken ? pieces.length : 4)]);
            }
            byte[] b = body.toByteArray();
            assertEquals(decodesWhole(b), WebhookServer.validUtf8(b), "round " + round);
        }
    }

    @Test
    void serverTimingWritesMillisecondsWithThreeDecimals() {
        assertEquals("queue;dur=0.420;desc=\"durable queueing\", handler;dur=0.540",
                WebhookServer.serverTiming(420_000, 540_000));
        assertEquals("queue;dur=0.000;desc=\"durable queueing\", handler;dur=1000.000",
                WebhookServer.serverTiming(0, 999_999_600));
        Random random = new Random(7);
        for (int i = 0; i < 10_000; i++) {
            long nanos = random.nextInt(5) == 0 ? random.nextLong(1_000_000_000_000L) : random.nextInt(50_000_000);
            if (nanos % 1000 == 500) {
                continue; // a tie: the double nanos / 1e6 may lie either side of it
            }
            assertEquals(String.format(Locale.ROOT, "%.3f", nanos / 1e6),
                    WebhookServer.millis(new StringBuilder(), nanos).toString(), nanos + " ns");
        }
    }
}
