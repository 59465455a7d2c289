package dev.agentx.clarify.github.inbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalInt;

/**
 * The Linux nice value of the calling thread, read from {@code /proc/thread-self/stat}. The JVM
 * gives a thread of {@link Thread#MIN_PRIORITY} nice 4 only when started with
 * {@code -XX:ThreadPriorityPolicy=1} (lowering a priority needs no privilege); without it every
 * Java thread runs at the process's nice. Reading it back is how the server tells whether its
 * worker really steps back for the webhook's threads.
 */
public final class ThreadNice {
    private static final Path STAT = Path.of("/proc/thread-self/stat");
    /** In {@code stat}, nice is field 19; the fields after the command's closing parenthesis start at field 3. */
    private static final int NICE_AFTER_COMMAND = 19 - 3;

    private ThreadNice() {
    }

    /** The calling thread's nice, or empty where there is no {@code /proc} (not Linux) or it cannot be read. */
    public static OptionalInt ofCurrentThread() {
        try {
            return parse(Files.readString(STAT));
        } catch (IOException | SecurityException e) {
            return OptionalInt.empty();
        }
    }

    /** The nice field of a {@code /proc/.../stat} line; the command may hold spaces and parentheses. */
    static OptionalInt parse(String stat) {
        int close = stat.lastIndexOf(')');
        if (close < 0 || close + 2 > stat.length()) {
            return OptionalInt.empty();
        }
        String[] fields = stat.substring(close + 2).trim().split(" ");
        if (fields.length <= NICE_AFTER_COMMAND) {
            return OptionalInt.empty();
        }
        try {
            return OptionalInt.of(Integer.parseInt(fields[NICE_AFTER_COMMAND]));
        } catch (NumberFormatException e) {
            return OptionalInt.empty();
        }
    }
}
