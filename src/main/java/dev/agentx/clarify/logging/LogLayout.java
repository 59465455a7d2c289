package dev.agentx.clarify.logging;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.StackTraceElementProxy;
import ch.qos.logback.core.LayoutBase;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import java.util.TreeMap;

/**
 * Text: {@code 2026-02-26T10:00:00.123Z WARN  FileLock [delivery=..] - message}; JSON: one object per
 * line with {@code ts, level, logger, msg}, the MDC fields (delivery id, repository, issue) and
 * the exception, written by jackson-core's generator (no data binding: logging starts light).
 */
final class LogLayout extends LayoutBase<ILoggingEvent> {
    private static final JsonFactory JSON = new JsonFactory();
    private static final DateTimeFormatter TS = DateTimeFormatter.ISO_INSTANT.withZone(ZoneOffset.UTC);
    private final boolean json;

    LogLayout(boolean json) {
        this.json = json;
    }

    @Override
    public String doLayout(ILoggingEvent e) {
        String logger = e.getLoggerName();
        String shortName = logger.substring(logger.lastIndexOf('.') + 1);
        Map<String, String> mdc = new TreeMap<>(e.getMDCPropertyMap());
        StringBuilder b = new StringBuilder(128);
        if (json) {
            return jsonLine(e, shortName, mdc);
        }
        b.append(TS.format(Instant.ofEpochMilli(e.getTimeStamp()))).append(' ');
        String level = e.getLevel().toString();
        b.append(level).append(" ".repeat(Math.max(1, 6 - level.length()))).append(shortName);
        if (!mdc.isEmpty()) {
            b.append(' ').append(mdc);
        }
        b.append(" - ").append(e.getFormattedMessage()).append('\n');
        if (e.getThrowableProxy() != null) {
            b.append(throwable(e.getThrowableProxy())).append('\n');
        }
        return b.toString();
    }

    private static String throwable(IThrowableProxy t) {
        StringBuilder b = new StringBuilder();
        for (IThrowableProxy p = t; p != null; p = p.getCause()) {
            b.append(p == t ? "" : "Caused by: ").append(p.getClassName()).append(": ").append(p.getMessage()).append('\n');
            StackTraceElementProxy[] frames = p.getStackTraceElementProxyArray();
            for (int i = 0; i < Math.min(frames.length, 12); i++) {
                b.append("\tat ").append(frames[i].getStackTraceElement()).append('\n');
            }
        }
        return b.toString().stripTrailing();
    }

    /** The event as one JSON object and a line end, written by Jackson's generator (its escaping). */
    private static String jsonLine(ILoggingEvent e, String logger, Map<String, String> mdc) {
        StringWriter out = new StringWriter(160);
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("ts", TS.format(Instant.ofEpochMilli(e.getTimeStamp())));
            g.writeStringField("level", e.getLevel().toString());
            g.writeStringField("logger", logger);
            g.writeStringField("thread", e.getThreadName());
            g.writeStringField("msg", e.getFormattedMessage());
            for (Map.Entry<String, String> m : mdc.entrySet()) {
                g.writeStringField(m.getKey(), m.getValue());
            }
            if (e.getThrowableProxy() != null) {
                g.writeStringField("exception", throwable(e.getThrowableProxy()));
            }
            g.writeEndObject();
        } catch (IOException x) {
            throw new UncheckedIOException(x);
        }
        return out.append('\n').toString();
    }
}
