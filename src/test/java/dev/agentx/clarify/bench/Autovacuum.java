package dev.agentx.clarify.bench;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * PostgreSQL's autovacuum during a span of a run, from the server's log: the embedded database
 * of the webhook benchmark logs every automatic vacuum and analyze
 * ({@code log_autovacuum_min_duration = 0}, {@link DatabaseLog#SETTINGS}) with the CPU it took.
 * Autovacuum runs on its own schedule (a round a minute over the tables that changed enough), on the same
 * cores as everything else, so a run's slow seconds may be its.
 */
final class Autovacuum {
    /** A log entry's first line: its time, then the rest of the prefix up to its level. */
    private static final Pattern START = Pattern.compile(DatabaseLog.ENTRY + "automatic (vacuum|analyze) of table ");
    /** The CPU line of an autovacuum entry (one of its continuation lines, which start with a tab). */
    private static final Pattern CPU = Pattern.compile("system usage: CPU: user: ([\\d.]+) s, system: ([\\d.]+) s");

    private Autovacuum() {
    }

    /**
     * What {@code log} says autovacuum did between {@code from} and {@code to}: how many vacuums
     * and analyzes, their CPU, and the seconds after {@code from} in which they ended.
     */
    static String between(DatabaseLog log, Instant from, Instant to) {
        int vacuums = 0;
        int analyzes = 0;
        double cpu = 0;
        Map<Long, Double> bySecond = new TreeMap<>();
        List<String> lines = log.lines();
        for (int i = 0; i < lines.size(); i++) {
            Matcher start = START.matcher(lines.get(i));
            if (!start.find()) {
                continue;
            }
            Matcher used = null;
            for (int j = i + 1; j < lines.size() && lines.get(j).startsWith("\t"); j++) {
                Matcher c = CPU.matcher(lines.get(j));
                if (c.find()) {
                    used = c;
                    break;
                }
            }
            Instant at = DatabaseLog.time(start.group(1));
            if (used == null || at.isBefore(from) || at.isAfter(to)) {
                continue;
            }
            double seconds = Double.parseDouble(used.group(1)) + Double.parseDouble(used.group(2));
            if (start.group(2).equals("vacuum")) {
                vacuums++;
            } else {
                analyzes++;
            }
            cpu += seconds;
            bySecond.merge((at.toEpochMilli() - from.toEpochMilli()) / 1000, seconds, Double::sum);
        }
        if (vacuums + analyzes == 0) {
            return "none";
        }
        StringBuilder seconds = new StringBuilder();
        bySecond.forEach((s, c) -> seconds.append(seconds.length() == 0 ? "" : ", ")
                .append(String.format("%d s (%.2f s of CPU)", s, c)));
        return String.format("%d vacuums and %d analyzes, %.2f s of CPU in all, ending in the seconds %s", vacuums,
                analyzes, cpu, seconds);
    }
}
