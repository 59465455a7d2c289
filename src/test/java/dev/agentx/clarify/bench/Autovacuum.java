package dev.agentx.clarify.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * PostgreSQL's autovacuum during a span of a run, from the server's log: the embedded database
 * of the webhook benchmark logs every automatic vacuum and analyze
 * ({@code log_autovacuum_min_duration = 0}, {@link #SETTINGS}) with the CPU it took. Autovacuum
 * runs on its own schedule (a round a minute over the tables that changed enough), on the same
 * cores as everything else, so a run's slow seconds may be its.
 */
final class Autovacuum {
    /** The server settings that make the log this reads: name, value pairs. */
    static final String[][] SETTINGS = {
        {"log_autovacuum_min_duration", "0"},
        {"logging_collector", "on"},
        {"log_timezone", "UTC"},
        // the embedded server's settings go through a shell's command line: no spaces, no '|'
        {"log_line_prefix", "%m:%p:"},
    };

    /** A log entry's first line: its time, then the rest of the prefix up to its level. */
    private static final Pattern START = Pattern.compile("^(\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\.\\d{3}) UTC\\S*?LOG:  "
            + "automatic (vacuum|analyze) of table ");
    /** The CPU line of an autovacuum entry (one of its continuation lines, which start with a tab). */
    private static final Pattern CPU = Pattern.compile("system usage: CPU: user: ([\\d.]+) s, system: ([\\d.]+) s");
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS");

    private Autovacuum() {
    }

    /**
     * What the logs in {@code logDir} say autovacuum did between {@code from} and {@code to}: how
     * many vacuums and analyzes, their CPU, and the seconds after {@code from} in which they ended.
     */
    static String between(Path logDir, Instant from, Instant to) {
        StringBuilder text = new StringBuilder();
        try (Stream<Path> logs = Files.list(logDir)) {
            for (Path log : (Iterable<Path>) logs.sorted()::iterator) {
                text.append(Files.readString(log)).append('\n');
            }
        } catch (IOException e) {
            return "unknown (" + e.getMessage() + ")";
        }
        int vacuums = 0;
        int analyzes = 0;
        double cpu = 0;
        Map<Long, Double> bySecond = new TreeMap<>();
        String[] lines = text.toString().split("\n");
        for (int i = 0; i < lines.length; i++) {
            Matcher start = START.matcher(lines[i]);
            if (!start.find()) {
                continue;
            }
            Matcher used = null;
            for (int j = i + 1; j < lines.length && lines[j].startsWith("\t"); j++) {
                Matcher c = CPU.matcher(lines[j]);
                if (c.find()) {
                    used = c;
                    break;
                }
            }
            Instant at = LocalDateTime.parse(start.group(1), TIME).toInstant(ZoneOffset.UTC);
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
