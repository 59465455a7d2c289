package dev.agentx.clarify.github.notify;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.files.JsonSupport;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code outbox/notifications.log}: one JSON line per notification a receiver took (a {@code 2xx}),
 * for {@code agentx notifications}. A record for people, not the truth: the outbox's journal says
 * what was sent, and this log is appended after it, without a sync (a machine crash may lose its
 * last lines, never a notification). At {@link #ROTATE_AT} it is moved to {@code
 * notifications.log.1} (replacing the one before), so it never holds more than twice that.
 */
public final class NotificationLog {
    public static final String FILE = "notifications.log";
    static final long ROTATE_AT = 8L * 1024 * 1024;

    /** One sent notification, as its line records it. */
    public record Sent(String delivery, String event, String receiver, String shown, String repository, int issue,
                       String clarification, Instant queuedAt, Instant sentAt, int attempts, int status) {
    }

    private final Path file;
    private final long rotateAt;

    public NotificationLog(Path outboxDir) {
        this(outboxDir, ROTATE_AT);
    }

    NotificationLog(Path outboxDir, long rotateAt) {
        this.file = outboxDir.resolve(FILE);
        this.rotateAt = rotateAt;
    }

    /** Appends the line of {@code sent}; a failure to write it is the caller's to log, never a failed send. */
    public synchronized void append(Sent sent) {
        ObjectNode n = JsonSupport.shared().valueToTree(sent);
        byte[] line = (n.toString() + "\n").getBytes(StandardCharsets.UTF_8);
        try {
            if (Files.exists(file) && Files.size(file) + line.length > rotateAt) {
                Files.move(file, file.resolveSibling(FILE + ".1"), StandardCopyOption.REPLACE_EXISTING,
                        StandardCopyOption.ATOMIC_MOVE);
            }
            Files.write(file, line, StandardOpenOption.CREATE, StandardOpenOption.APPEND, StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot append to " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * The notifications the log in {@code outboxDir} records as sent, oldest first (the rotated
     * file's first); a line that cannot be read (the last one, cut by a crash) is left out.
     */
    public static List<Sent> read(Path outboxDir) {
        List<Sent> out = new ArrayList<>();
        for (Path f : List.of(outboxDir.resolve(FILE + ".1"), outboxDir.resolve(FILE))) {
            List<String> lines;
            try {
                lines = Files.readAllLines(f, StandardCharsets.UTF_8);
            } catch (NoSuchFileException e) {
                continue;
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + f + ": " + e.getMessage(), e);
            }
            for (String line : lines) {
                try {
                    JsonNode n = JsonSupport.shared().readTree(line);
                    out.add(JsonSupport.shared().treeToValue(n, Sent.class));
                } catch (IOException | RuntimeException e) {
                    // a torn last line: the notification was sent all the same
                }
            }
        }
        return out;
    }
}
