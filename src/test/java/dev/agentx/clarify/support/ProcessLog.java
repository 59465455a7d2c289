package dev.agentx.clarify.support;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The output a real process writes to a file, and waiting for a line in it (polling a process, not sleeping for time). */
public final class ProcessLog {
    private ProcessLog() {
    }

    /** The file's text so far; empty before the process wrote anything. */
    public static String read(Path log) {
        try {
            return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            return "";
        }
    }

    /** Waits until {@code pattern} is found in the log; fails if the process ends or the deadline passes first. */
    public static Matcher await(Process p, Path log, Pattern pattern, Duration deadline) throws InterruptedException {
        Instant end = Instant.now().plus(deadline);
        Matcher m;
        while (!(m = pattern.matcher(read(log))).find()) {
            assertTrue(p.isAlive() && Instant.now().isBefore(end), "waiting for " + pattern + ":\n" + read(log));
            Thread.sleep(50);
        }
        return m;
    }

    /** Waits until {@code condition} holds, polling; fails naming {@code what} if the deadline passes first. */
    public static void until(String what, java.util.function.BooleanSupplier condition, Duration deadline)
            throws InterruptedException {
        Instant end = Instant.now().plus(deadline);
        while (!condition.getAsBoolean()) {
            if (Instant.now().isAfter(end)) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(50); // polling a real process, not making time pass
        }
    }

    /** The webhook port {@code agentx serve} says it listens on, once it says so. */
    public static int serverPort(Process p, Path log, Duration deadline) throws InterruptedException {
        return Integer.parseInt(await(p, log, LISTENING, deadline).group(1));
    }

    private static final Pattern LISTENING = Pattern.compile("listening on http://0\\.0\\.0\\.0:(\\d+)/");
}
