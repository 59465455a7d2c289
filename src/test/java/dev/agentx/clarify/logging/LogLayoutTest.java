package dev.agentx.clarify.logging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.LoggingEvent;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The JSON layout: one object per line that reads back as what was logged, whatever the text holds. */
class LogLayoutTest {
    @Test
    void aJsonLineReadsBackAsTheEventWithItsMdcAndException() throws Exception {
        LoggerContext context = new LoggerContext();
        String message = "quote \" backslash \\ newline \n tab \t control \u0001 and \u00e9";
        LoggingEvent e = new LoggingEvent("x", context.getLogger("dev.agentx.clarify.Some"), Level.WARN, message,
                new IllegalStateException("boom \"here\""), null);
        e.setMDCPropertyMap(Map.of("delivery", "d-1\n", "issue", "7"));
        String line = new LogLayout(true).doLayout(e);
        assertTrue(line.endsWith("}\n") && line.indexOf('\n') == line.length() - 1, line);
        JsonNode read = new ObjectMapper().readTree(line);
        assertEquals(message, read.get("msg").asText());
        assertEquals("WARN", read.get("level").asText());
        assertEquals("Some", read.get("logger").asText());
        assertEquals("d-1\n", read.get("delivery").asText());
        assertEquals("7", read.get("issue").asText());
        assertTrue(read.get("exception").asText().startsWith("java.lang.IllegalStateException: boom \"here\""),
                read.get("exception").asText());
    }
}
