package dev.agentx.clarify.support;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reading the server's {@code /metrics} text (Prometheus exposition) in tests and the benchmark. */
public final class Scrape {
    private Scrape() {
    }

    /**
     * The value of one series, e.g. {@code agentx_inbox_depth} or
     * {@code agentx_deliveries_total{event="ping",action="",outcome="queued"}}; an AssertionError if absent.
     */
    public static double value(String scrape, String series) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)$").matcher(scrape);
        if (!m.find()) {
            throw new AssertionError("no series " + series + " in\n" + scrape);
        }
        return Double.parseDouble(m.group(1));
    }

    /** The sum of every series of {@code name} (each label set; not the _bucket, _count or _sum of others). */
    public static double sum(String scrape, String name) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "(?:\\{[^}]*\\})? (\\S+)$").matcher(scrape);
        double total = 0;
        while (m.find()) {
            total += Double.parseDouble(m.group(1));
        }
        return total;
    }

    /** Each metric's name and type, from the {@code # TYPE} lines. */
    public static java.util.Map<String, String> types(String scrape) {
        java.util.Map<String, String> out = new java.util.TreeMap<>();
        Matcher m = Pattern.compile("(?m)^# TYPE (\\S+) (\\S+)$").matcher(scrape);
        while (m.find()) {
            out.put(m.group(1), m.group(2));
        }
        return out;
    }
}
