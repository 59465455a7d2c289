package dev.agentx.clarify.files;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;

/**
 * {@link Instant#parse} with a fast path for the one form our files hold, {@link Instant#toString}'s:
 * {@code 2026-02-26T10:00:00Z}, {@code 2026-02-26T10:00:00.123Z} (1 to 9 fraction digits). A ledger
 * holds several instants per record and a list reads every active ledger, so in a fresh JVM
 * {@code DateTimeFormatter}'s general parser cost a CLI run tens of milliseconds. Anything else
 * (another form, an invalid date, hour 24, a leap second, an offset) goes to {@link Instant#parse},
 * so what is accepted, what it means and the exceptions thrown are exactly {@code Instant.parse}'s.
 */
public final class IsoInstant {
    private IsoInstant() {
    }

    public static Instant parse(CharSequence text) {
        Instant fast = fast(text);
        return fast != null ? fast : Instant.parse(text);
    }

    /** The instant of {@code uuuu-MM-ddTHH:mm:ss[.f{1,9}]Z}, or null to leave it to the general parser. */
    static Instant fast(CharSequence s) {
        int n = s.length();
        if (n < 20 || n > 30 || n == 21 || s.charAt(4) != '-' || s.charAt(7) != '-' || s.charAt(10) != 'T'
                || s.charAt(13) != ':' || s.charAt(16) != ':' || s.charAt(n - 1) != 'Z') {
            return null;
        }
        int year = digits(s, 0, 4);
        int month = digits(s, 5, 7);
        int day = digits(s, 8, 10);
        int hour = digits(s, 11, 13);
        int minute = digits(s, 14, 16);
        int second = digits(s, 17, 19);
        if (year < 0 || month < 0 || day < 0 || hour < 0 || hour > 23 || minute < 0 || minute > 59
                || second < 0 || second > 59) {
            return null;
        }
        int nanos = 0;
        if (n > 20) {
            if (s.charAt(19) != '.') {
                return null;
            }
            int fraction = digits(s, 20, n - 1);
            if (fraction < 0) {
                return null;
            }
            nanos = fraction;
            for (int i = n - 1 - 20; i < 9; i++) {
                nanos *= 10;
            }
        }
        long epochDay;
        try {
            epochDay = LocalDate.of(year, month, day).toEpochDay();
        } catch (DateTimeException e) {
            return null; // no such date: Instant.parse says so
        }
        return Instant.ofEpochSecond(epochDay * 86_400 + hour * 3_600L + minute * 60L + second, nanos);
    }

    /**
     * Appends {@code t.toString()} to {@code out} without {@code DateTimeFormatter}, for the years
     * 0000 to 9999 (other years through {@code toString}): {@code 2026-02-26T10:00:00Z}, the
     * fraction in groups of three digits as needed ({@code .500}, {@code .123456},
     * {@code .123456789}). A compaction of the outbox writes a million of them.
     */
    public static StringBuilder append(StringBuilder out, Instant t) {
        long seconds = t.getEpochSecond();
        long days = Math.floorDiv(seconds, 86_400);
        int secondOfDay = (int) Math.floorMod(seconds, 86_400);
        if (days < -719_528 || days > 2_932_896) { // before 0000-01-01 or after 9999-12-31
            return out.append(t);
        }
        LocalDate date = LocalDate.ofEpochDay(days);
        pad(out, date.getYear(), 4).append('-');
        pad(out, date.getMonthValue(), 2).append('-');
        pad(out, date.getDayOfMonth(), 2).append('T');
        pad(out, secondOfDay / 3_600, 2).append(':');
        pad(out, secondOfDay / 60 % 60, 2).append(':');
        pad(out, secondOfDay % 60, 2);
        int nanos = t.getNano();
        if (nanos != 0) {
            out.append('.');
            if (nanos % 1_000_000 == 0) {
                pad(out, nanos / 1_000_000, 3);
            } else if (nanos % 1_000 == 0) {
                pad(out, nanos / 1_000, 6);
            } else {
                pad(out, nanos, 9);
            }
        }
        return out.append('Z');
    }

    private static StringBuilder pad(StringBuilder out, int value, int width) {
        for (int d = width - 1, p = 1; d > 0; d--) {
            p *= 10;
            if (value < p) {
                out.append('0');
            }
        }
        return out.append(value);
    }

    /** The decimal value of s[from, to), or -1 if it is not all ASCII digits. */
    private static int digits(CharSequence s, int from, int to) {
        int v = 0;
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
            v = v * 10 + (c - '0');
        }
        return v;
    }
}
