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
}
