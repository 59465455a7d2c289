package dev.agentx.clarify.logging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * What the GitHub client (hub4j) logs through {@code java.util.logging} reaches Logback, in our
 * format and under our levels, and not also the JDK's console handler.
 */
class JavaUtilLoggingTest {
    private static final String HUB4J = "org.kohsuke.github.GitHubClient";

    @Test
    void theGitHubClientsLinesGoThroughLogback() {
        LogSetup.bridgeJavaUtilLogging();
        LogSetup.bridgeJavaUtilLogging(); // once is enough: no second handler, no line twice
        Logger logger = ((LoggerContext) LoggerFactory.getILoggerFactory()).getLogger(HUB4J);
        ListAppender<ILoggingEvent> seen = new ListAppender<>();
        seen.start();
        logger.addAppender(seen);
        try {
            java.util.logging.Logger.getLogger(HUB4J).warning("retrying the connection");
            List<ILoggingEvent> events = seen.list;
            assertEquals(1, events.size(), "the line reached Logback once");
            assertEquals(Level.WARN, events.get(0).getLevel());
            assertEquals(HUB4J, events.get(0).getLoggerName());
            assertEquals("retrying the connection", events.get(0).getFormattedMessage());
            java.util.logging.Handler[] handlers = java.util.logging.Logger.getLogger("").getHandlers();
            assertTrue(Arrays.stream(handlers).noneMatch(h -> h instanceof java.util.logging.ConsoleHandler),
                    "the JDK's console handler is gone: " + Arrays.toString(handlers));
        } finally {
            logger.detachAppender(seen);
        }
    }
}
