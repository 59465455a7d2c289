package dev.agentx.clarify.logging;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.StackTraceElementProxy;
import ch.qos.logback.core.LayoutBase;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import java.util.TreeMap;

/**
 * Text: {@code 2026-02-26T10:00:00.123Z WARN  FileLock [delivery=..] - message}; JSON: one object per
 * line with {@code ts, level, logger, msg}, the MDC fields (delivery id, repository, issue) and
 * the exception. Written by hand to keep start-up light.
 */
final class LogLayout extends LayoutBase<ILoggingEvent> {
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
            b.append("{\"ts\":\"").append(TS.format(Instant.ofEpochMilli(e.getTimeStamp()))).append('"');
            field(b, "level", e.getLevel().toString());
            field(b, "logger", shortName);
            field(b, "thread", e.getThreadName());
            field(b, "msg", e.getFormattedMessage());
            mdc.forEach((k, v) -> field(b, k, v));
            if (e.getThrowableProxy() != null) {
                field(b, "exception", throwable(e.getThrowableProxy()));
            }
            return b.append("}\n").toString();
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

    private static void field(StringBuilder b, String key, String value) {
        b.append(",\"").append(key).append("\":");
        if (value == null) {
            b.append("null");
            return;
        }
        b.append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        b.append('"');
    }
}
