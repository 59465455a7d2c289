package dev.agentx.clarify.monitor;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations as people write them: {@code 30m}, {@code 2h}, {@code 1h30m}, {@code 7d}, {@code 2w}. */
public final class CliDuration {
    private static final Pattern FORMAT = Pattern.compile("(\\d{1,6})([mhdw])");

    private CliDuration() {
    }

    /** Parses {@code <number><unit>}, unit m (minutes), h, d or w; throws IllegalArgumentException saying how. */
    public static Duration parse(String text) {
        Matcher m = FORMAT.matcher(text == null ? "" : text.strip());
        if (!m.matches() || Long.parseLong(m.group(1)) == 0) {
            throw new IllegalArgumentException("'" + text + "' is not a period: write a positive number and a unit, "
                    + "m (minutes), h (hours), d (days) or w (weeks), like 30m, 12h, 7d or 2w");
        }
        long n = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            case "d" -> Duration.ofDays(n);
            default -> Duration.ofDays(7 * n);
        };
    }

    public static String format(Duration d) {
        long minutes = d.toMinutes();
        if (minutes <= 0) {
            return d.toSeconds() + "s";
        }
        long days = minutes / (60 * 24);
        long hours = minutes % (60 * 24) / 60;
        long mins = minutes % 60;
        StringBuilder b = new StringBuilder();
        if (days > 0) {
            b.append(days).append('d');
        }
        if (hours > 0) {
            b.append(hours).append('h');
        }
        if (mins > 0) {
            b.append(mins).append('m');
        }
        return b.toString();
    }
}
