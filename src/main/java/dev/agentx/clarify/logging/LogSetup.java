package dev.agentx.clarify.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.LayoutWrappingEncoder;
import ch.qos.logback.core.spi.ContextAwareBase;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.slf4j.LoggerFactory;

/**
 * Configures Logback in code (found through {@code META-INF/services}), so no XML configurator is
 * loaded: the CLI starts faster. Logs go to stderr, keeping stdout for output and JSON.
 * {@code AGENTX_LOG_LEVEL} sets the level (default WARN; {@code agentx serve} uses INFO unless set),
 * {@code AGENTX_LOG_FORMAT=json} switches to one JSON object per line.
 */
public final class LogSetup extends ContextAwareBase implements Configurator {
    /** Set by {@code agentx serve} before the first logger is created. */
    public static final String DEFAULT_LEVEL_PROPERTY = "agentx.log.level";
    public static final String FORMAT_ENV = "AGENTX_LOG_FORMAT";
    public static final String LEVEL_ENV = "AGENTX_LOG_LEVEL";
    /** Every environment variable read here (deploy files are checked against it). */
    public static final List<String> ENV_NAMES = List.of(FORMAT_ENV, LEVEL_ENV);
    /** The variables read: the process's, or those {@link #reconfigure} was given. */
    private static volatile Map<String, String> environment = System.getenv();

    /**
     * Configures logging again from {@code env}: {@code agentx serve} passes its environment with the
     * data dir's {@code agentx.env} merged in, so a variable there acts as if it were exported.
     */
    public static void reconfigure(Map<String, String> env) {
        environment = Map.copyOf(env);
        if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context) {
            context.reset();
            new LogSetup().configure(context);
        }
        bridgeJavaUtilLogging();
    }

    /**
     * Sends what libraries log through {@code java.util.logging} (the GitHub client, hub4j) to the
     * same appender, in the same format and levels, instead of the JDK's own two-line format on
     * stderr (which would also break {@code AGENTX_LOG_FORMAT=json}'s one object per line). For the
     * commands that call GitHub; the other commands never load {@code java.util.logging}.
     */
    public static void bridgeJavaUtilLogging() {
        synchronized (LogSetup.class) {
            if (!org.slf4j.bridge.SLF4JBridgeHandler.isInstalled()) {
                org.slf4j.bridge.SLF4JBridgeHandler.removeHandlersForRootLogger();
                org.slf4j.bridge.SLF4JBridgeHandler.install();
            }
        }
    }

    @Override
    public ExecutionStatus configure(LoggerContext context) {
        String format = environment.getOrDefault(FORMAT_ENV, "text").trim().toLowerCase(Locale.ROOT);
        LogLayout layout = new LogLayout("json".equals(format));
        layout.setContext(context);
        layout.start();
        LayoutWrappingEncoder<ILoggingEvent> encoder = new LayoutWrappingEncoder<>();
        encoder.setContext(context);
        encoder.setLayout(layout);
        encoder.start();
        ConsoleAppender<ILoggingEvent> appender = new ConsoleAppender<>();
        appender.setContext(context);
        appender.setName("stderr");
        appender.setTarget("System.err");
        appender.setEncoder(encoder);
        appender.start();
        Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        root.addAppender(appender);
        root.setLevel(level());
        // Libraries talk a lot at INFO; their warnings still come through.
        context.getLogger("org.eclipse.jetty").setLevel(Level.WARN);
        context.getLogger("io.javalin").setLevel(Level.WARN);
        context.getLogger("org.apache.hc").setLevel(Level.WARN);
        // HttpClient's request headers and bytes carry the App's JWT and installation tokens: never logged
        context.getLogger("org.apache.hc.client5.http.headers").setLevel(Level.OFF);
        context.getLogger("org.apache.hc.client5.http.wire").setLevel(Level.OFF);
        // a value that is none of the choices falls back to the default, and says so
        if (!format.equals("text") && !format.equals("json")) {
            root.warn("{}={} is neither text nor json; the text format is used", FORMAT_ENV,
                    environment.get(FORMAT_ENV));
        }
        String configured = environment.get(LEVEL_ENV);
        if (configured != null && !configured.isBlank() && Level.toLevel(configured.trim(), null) == null) {
            root.warn("{}={} is none of TRACE, DEBUG, INFO, WARN, ERROR, OFF; {} is used", LEVEL_ENV, configured,
                    level());
        }
        return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
    }

    /**
     * What is wrong with the logging variables in {@code env}, for {@code agentx serve} to refuse
     * with its other settings (a command falls back to the default with a warning instead).
     */
    public static List<String> problems(Map<String, String> env) {
        List<String> out = new java.util.ArrayList<>();
        String format = env.get(FORMAT_ENV);
        if (format != null && !format.isBlank() && !List.of("text", "json").contains(
                format.trim().toLowerCase(Locale.ROOT))) {
            out.add(FORMAT_ENV + " must be text or json, got '" + format + "'.");
        }
        String level = env.get(LEVEL_ENV);
        if (level != null && !level.isBlank() && Level.toLevel(level.trim(), null) == null) {
            out.add(LEVEL_ENV + " must be one of TRACE, DEBUG, INFO, WARN, ERROR, OFF, got '" + level + "'.");
        }
        return out;
    }

    static Level level() {
        String configured = environment.get(LEVEL_ENV);
        if (configured == null || configured.isBlank()) {
            configured = System.getProperty(DEFAULT_LEVEL_PROPERTY, "WARN");
        }
        return Level.toLevel(configured.trim(), Level.WARN);
    }
}
