package dev.agentx.clarify.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The embedded database's log of a webhook benchmark run, read once for the report's lines
 * taken from it ({@link Autovacuum}, {@link LockWaits}).
 */
final class DatabaseLog {
    /** The server settings that make the log the readers read: name, value pairs. */
    static final String[][] SETTINGS = {
        {"logging_collector", "on"},
        {"log_timezone", "UTC"},
        // the embedded server's settings go through a shell's command line: no spaces, no '|'
        {"log_line_prefix", "%m:%p:"},
        // every automatic vacuum and analyze, with the CPU it took (Autovacuum)
        {"log_autovacuum_min_duration", "0"},
        // a statement that waited for a lock longer than deadlock_timeout, and when it got it (LockWaits)
        {"log_lock_waits", "on"},
        {"deadlock_timeout", "5ms"},
        // each checkpoint's start and end, with the WAL files it added, removed and recycled (WalActivity)
        {"log_checkpoints", "on"},
    };

    /** The start of an entry's first line, up to its message: its time (group 1), the rest of the prefix, its level. */
    static final String ENTRY = "^(\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\.\\d{3}) UTC\\S*?LOG:  ";

    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS");

    private final List<String> lines;

    private DatabaseLog(List<String> lines) {
        this.lines = lines;
    }

    /** The lines of every log file in {@code dir}, in the order of their names (their start times). */
    static DatabaseLog read(Path dir) throws IOException {
        List<String> lines = new ArrayList<>();
        try (Stream<Path> logs = Files.list(dir)) {
            for (Path log : (Iterable<Path>) logs.sorted()::iterator) {
                lines.addAll(Files.readAllLines(log));
            }
        }
        return new DatabaseLog(lines);
    }

    List<String> lines() {
        return lines;
    }

    /** The instant an entry's time ({@link #ENTRY}'s group 1) stands for. */
    static Instant time(String entryTime) {
        return LocalDateTime.parse(entryTime, TIME).toInstant(ZoneOffset.UTC);
    }
}
