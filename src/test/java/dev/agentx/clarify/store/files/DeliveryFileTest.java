package dev.agentx.clarify.store.files;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.store.InboundDelivery;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DeliveryFileTest {
    private final ObjectMapper json = JsonSupport.mapper();
    private static final Instant AT = Instant.parse("2026-11-22T10:00:00.123Z");

    @Test
    void theBodyIsKeptByteForByteAfterAHeaderLine() throws IOException {
        byte[] body = "{\"comment\":{\"body\":\"line one\\nline two \u00e9\"}}\n\n".getBytes(StandardCharsets.UTF_8);
        byte[] file = DeliveryFile.encode(new InboundDelivery("abc-1", "issue_comment", AT, body));
        String text = new String(file, StandardCharsets.UTF_8);
        assertTrue(text.startsWith(DeliveryFile.MAGIC + "\n{"), text);
        assertArrayEquals(body, Arrays.copyOfRange(file, file.length - body.length, file.length));
        InboundDelivery back = DeliveryFile.decode(file);
        assertEquals("abc-1", back.id());
        assertEquals("issue_comment", back.event());
        assertEquals(AT, back.receivedAt());
        assertArrayEquals(body, back.body());
    }

    @Test
    void anEmptyBodyRoundTrips() throws IOException {
        byte[] file = DeliveryFile.encode(new InboundDelivery("x", "ping", AT, new byte[0]));
        assertEquals(0, DeliveryFile.decode(file).body().length);
    }

    @Test
    void aFileWithoutTheMagicLineIsRefused() throws IOException {
        byte[] json0 = json.writeValueAsBytes(new InboundDelivery("x-1", "ping", AT, "{}".getBytes(StandardCharsets.UTF_8)));
        IOException e = assertThrows(IOException.class, () -> DeliveryFile.decode(json0));
        assertTrue(e.getMessage().contains(DeliveryFile.MAGIC), e.getMessage());
    }

    @Test
    void aTruncatedOrDamagedHeaderIsAnError() throws IOException {
        byte[] file = DeliveryFile.encode(new InboundDelivery("abc", "ping", AT, "{}".getBytes(StandardCharsets.UTF_8)));
        byte[] cut = Arrays.copyOf(file, DeliveryFile.MAGIC.length() + 10);
        assertThrows(IOException.class, () -> DeliveryFile.decode(cut));
        byte[] noTime = (DeliveryFile.MAGIC + "\n{\"id\":\"a\",\"event\":\"ping\"}\n{}").getBytes(StandardCharsets.UTF_8);
        assertThrows(IOException.class, () -> DeliveryFile.decode(noTime));
        byte[] badTime = (DeliveryFile.MAGIC + "\n{\"id\":\"a\",\"event\":\"ping\",\"receivedAt\":\"soon\"}\n{}")
                .getBytes(StandardCharsets.UTF_8);
        assertThrows(IOException.class, () -> DeliveryFile.decode(badTime));
    }
}
