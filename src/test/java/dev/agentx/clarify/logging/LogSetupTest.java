package dev.agentx.clarify.logging;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A log variable with a value that is none of its choices falls back to the default and says so. */
class LogSetupTest {
    @Test
    void aBadLevelOrFormatIsNamedOnStderrAndTheDefaultsApply() {
        PrintStream stderr = System.err;
        ByteArrayOutputStream seen = new ByteArrayOutputStream();
        System.setErr(new PrintStream(seen, true, StandardCharsets.UTF_8));
        try {
            LogSetup.reconfigure(Map.of(LogSetup.LEVEL_ENV, "loud", LogSetup.FORMAT_ENV, "xml"));
        } finally {
            System.setErr(stderr);
            LogSetup.reconfigure(System.getenv());
        }
        String err = seen.toString(StandardCharsets.UTF_8);
        assertTrue(err.contains("AGENTX_LOG_FORMAT=xml is neither text nor json; the text format is used"), err);
        assertTrue(err.contains("AGENTX_LOG_LEVEL=loud is none of TRACE, DEBUG, INFO, WARN, ERROR, OFF; WARN is used"),
                err);
    }
}
