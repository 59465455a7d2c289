package dev.agentx.clarify.github.inbox;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.github.Stamps;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The durable inbox of verified deliveries under {@code $AGENTX_DATA_DIR/inbox/}:
 * {@code pending/<seq>-<delivery>.json} until processed (so a crash loses nothing: they are
 * processed after restart), {@code pending/<...>.progress} for how far a delivery got, and
 * {@code seen/<delivery>} for every delivery id accepted in the last {@link #KEEP_SEEN}, which
 * covers GitHub's manual redelivery window (deliveries of the past 3 days) with room to spare.
 * {@code failed/} keeps deliveries that could not be processed, with the reason in the log.
 */
public final class Inbox {
    private static final Logger LOG = LoggerFactory.getLogger(Inbox.class);
    public static final Duration KEEP_SEEN = Duration.ofDays(8);
    private static final Pattern DELIVERY_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,99}");

    private final Path pending;
    private final Path seen;
    private final Path failed;
    private final Clock clock;
    private final ObjectMapper json = JsonSupport.mapper();
    private long seq;

    public enum Accepted { QUEUED, DUPLICATE }

    /**
     * How far a delivery got: commands done (and whether one was refused), failed attempts and
     * when to try again.
     */
    public record Progress(int commandsDone, boolean refused, int attempts, Instant notBefore) {
        public static final Progress NONE = new Progress(0, false, 0, null);
    }

    public Inbox(Path dir, Clock clock) {
        this.pending = dir.resolve("pending");
        this.seen = dir.resolve("seen");
        this.failed = dir.resolve("failed");
        this.clock = clock;
        try {
            Files.createDirectories(pending);
            Files.createDirectories(seen);
            Files.createDirectories(failed);
            for (Path p : pending()) {
                String name = p.getFileName().toString();
                seq = Math.max(seq, Long.parseLong(name.substring(0, name.indexOf('-'))));
                // A crash between queuing and marking it seen: mark it now.
                Path marker = seen.resolve(deliveryIdOf(p));
                if (!Files.exists(marker)) {
                    markSeen(marker, clock.instant());
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the inbox in " + dir + ": " + e.getMessage(), e);
        }
    }

    public static boolean validId(String id) {
        return id != null && DELIVERY_ID.matcher(id).matches();
    }

    /**
     * Queues a delivery durably unless its id was seen before. The delivery file is written (and
     * fsynced) before the seen marker, so a crash between the two cannot lose it.
     */
    public synchronized Accepted accept(String id, String event, byte[] body) {
        if (!validId(id)) {
            throw new IllegalArgumentException("invalid delivery id '" + id + "'");
        }
        Path marker = seen.resolve(id);
        if (Files.exists(marker)) {
            return Accepted.DUPLICATE;
        }
        Instant now = clock.instant();
        seq++;
        Path file = pending.resolve(String.format("%020d-%s.json", seq, id));
        try {
            AtomicFiles.write(file, json.writeValueAsBytes(new InboundDelivery(id, event, now, body)));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        markSeen(marker, now);
        return Accepted.QUEUED;
    }

    private void markSeen(Path marker, Instant at) {
        Stamps.write(marker, at);
    }

    /** Deliveries waiting, oldest first. */
    public synchronized List<Path> pending() {
        try (Stream<Path> s = Files.list(pending)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".json")).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String deliveryIdOf(Path file) {
        String name = file.getFileName().toString();
        return name.substring(name.indexOf('-') + 1, name.length() - ".json".length());
    }

    public InboundDelivery read(Path file) {
        try {
            return json.readValue(file.toFile(), InboundDelivery.class);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read inbox entry " + file + ": " + e.getMessage(), e);
        }
    }

    private static Path progressFile(Path file) {
        String name = file.getFileName().toString();
        return file.resolveSibling(name.substring(0, name.length() - ".json".length()) + ".progress");
    }

    public Progress progress(Path file) {
        try {
            return json.readValue(Files.readAllBytes(progressFile(file)), Progress.class);
        } catch (NoSuchFileException e) {
            return Progress.NONE;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public void saveProgress(Path file, Progress progress) {
        try {
            AtomicFiles.write(progressFile(file), json.writeValueAsBytes(progress));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The delivery is processed: forget it (its id stays in {@code seen/}). */
    public synchronized void done(Path file) {
        try {
            Files.deleteIfExists(file);
            Files.deleteIfExists(progressFile(file));
            AtomicFiles.fsyncDirectory(pending);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The delivery cannot be processed: keep it in {@code failed/} for a person to look at. */
    public synchronized void fail(Path file, String why) {
        LOG.error("delivery {} moved to {}: {}", deliveryIdOf(file), failed, why);
        try {
            Files.move(file, failed.resolve(file.getFileName()));
            Files.deleteIfExists(progressFile(file));
            AtomicFiles.fsyncDirectory(pending);
            AtomicFiles.fsyncDirectory(failed);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Forgets delivery ids seen longer ago than {@link #KEEP_SEEN}. */
    public synchronized void prune() {
        try {
            Stamps.prune(seen, Inbox::validId, clock.instant().minus(KEEP_SEEN), id -> { });
        } catch (UncheckedIOException e) {
            LOG.warn(e.getMessage());
        }
    }
}
