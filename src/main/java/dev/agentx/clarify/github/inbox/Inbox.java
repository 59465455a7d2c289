package dev.agentx.clarify.github.inbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.files.DirectorySync;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The durable inbox of verified deliveries under {@code $AGENTX_DATA_DIR/inbox/}:
 * {@code pending/<seq>-<delivery>.json} until processed (so a crash loses nothing: they are
 * processed after restart), {@code pending/<...>.progress} for how far a delivery got, and
 * {@code seen/<delivery>} for every delivery id processed in the last {@link #KEEP_SEEN}, which
 * covers GitHub's manual redelivery window (deliveries of the past 3 days) with room to spare.
 * {@code failed/} keeps deliveries that could not be processed, with the reason in the log.
 *
 * <p>Accepting is built for many concurrent webhook requests: no lock is shared with the worker;
 * the delivery file is written and fsynced by the request's thread, and the directory fsync that
 * makes its name durable is shared by the requests that arrive together ({@link DirectorySync}).
 * Duplicates are told from the ids in memory: those of {@code seen/} and of the pending files,
 * loaded at start. A delivery's seen marker is written when it is done (or failed), before its
 * pending file goes, so at every moment one of the two is on disk.
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
    private final DirectorySync pendingSync;
    private final DirectorySync seenSync;
    private final AtomicLong seq = new AtomicLong();
    /** Ids of deliveries pending or seen: a second delivery with one of them is a duplicate. */
    private final Set<String> known = ConcurrentHashMap.newKeySet();
    private final ConcurrentSkipListMap<Long, Queued> queued = new ConcurrentSkipListMap<>();
    private volatile Consumer<Queued> listener = q -> { };

    public enum Accepted { QUEUED, DUPLICATE }

    /**
     * A delivery waiting in {@code pending/}: its place in line, id, event, when it was received,
     * its {@link #orderKey(JsonNode) order key} and its file.
     */
    public record Queued(long seq, String id, String event, Instant receivedAt, String key, Path file) {
    }

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
        this.pendingSync = new DirectorySync(pending);
        this.seenSync = new DirectorySync(seen);
        try {
            Files.createDirectories(pending);
            Files.createDirectories(seen);
            Files.createDirectories(failed);
            try (Stream<Path> s = Files.list(seen)) {
                s.map(p -> p.getFileName().toString()).filter(Inbox::validId).forEach(known::add);
            }
            List<Path> files;
            try (Stream<Path> s = Files.list(pending)) {
                files = s.filter(p -> p.getFileName().toString().endsWith(".json")
                        && !p.getFileName().toString().startsWith(".")).sorted().toList();
            }
            for (Path p : files) {
                String name = p.getFileName().toString();
                long n = Long.parseLong(name.substring(0, name.indexOf('-')));
                seq.accumulateAndGet(n, Math::max);
                String id = deliveryIdOf(p);
                known.add(id);
                InboundDelivery d;
                try {
                    d = read(p);
                } catch (RuntimeException e) {
                    // left for the worker, which moves it to failed/ with the reason
                    queued.put(n, new Queued(n, id, "?", clock.instant(), "", p));
                    continue;
                }
                queued.put(n, new Queued(n, id, d.event(), d.receivedAt(), orderKey(d.body()), p));
            }
        } catch (IOException | NumberFormatException e) {
            throw new UncheckedIOException("cannot open the inbox in " + dir + ": " + e.getMessage(),
                    e instanceof IOException io ? io : new IOException(e));
        }
    }

    public static boolean validId(String id) {
        return id != null && DELIVERY_ID.matcher(id).matches();
    }

    /**
     * What orders deliveries: those with the same key are processed one after another in the order
     * received; others may run side by side. The repository and issue the payload is about, or ""
     * for one about no issue (ping, installation).
     */
    public static String orderKey(JsonNode payload) {
        String repo = payload.path("repository").path("full_name").asText("");
        int issue = payload.path("issue").path("number").asInt(0);
        return repo.isEmpty() || issue <= 0 ? "" : repo + "#" + issue;
    }

    private String orderKey(byte[] body) {
        try {
            JsonNode node = json.readTree(body);
            return node == null ? "" : orderKey(node);
        } catch (IOException e) {
            return "";
        }
    }

    /** Who is told of each delivery once it is queued durably (the worker); deliveries queued before are in {@link #queued()}. */
    public void onQueued(Consumer<Queued> listener) {
        this.listener = listener;
    }

    /** As {@link #accept(String, String, byte[], String)}, the order key read from the body. */
    public Accepted accept(String id, String event, byte[] body) {
        return accept(id, event, body, orderKey(body));
    }

    /**
     * Queues a delivery durably unless its id was seen before; when this returns QUEUED the
     * delivery survives a crash. Safe to call from many threads at once.
     */
    public Accepted accept(String id, String event, byte[] body, String key) {
        if (!validId(id)) {
            throw new IllegalArgumentException("invalid delivery id '" + id + "'");
        }
        if (!known.add(id)) {
            return Accepted.DUPLICATE;
        }
        Instant now = clock.instant();
        long n = seq.incrementAndGet();
        Path file = pending.resolve(String.format("%020d-%s.json", n, id));
        try {
            AtomicFiles.write(file, json.writeValueAsBytes(new InboundDelivery(id, event, now, body)), pendingSync);
        } catch (IOException | RuntimeException e) {
            known.remove(id);
            throw e instanceof IOException io ? new UncheckedIOException(io) : (RuntimeException) e;
        }
        Queued q = new Queued(n, id, event, now, key, file);
        queued.put(n, q);
        listener.accept(q);
        return Accepted.QUEUED;
    }

    /** Deliveries waiting, oldest first. */
    public List<Queued> queued() {
        return new ArrayList<>(queued.values());
    }

    /** How many deliveries wait. */
    public int size() {
        return queued.size();
    }

    /** The files of the deliveries waiting, oldest first. */
    public List<Path> pending() {
        return queued.values().stream().map(Queued::file).toList();
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
            AtomicFiles.write(progressFile(file), json.writeValueAsBytes(progress), pendingSync);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The delivery is processed: its id is kept in {@code seen/}, its files go. */
    public void done(Path file) {
        String id = deliveryIdOf(file);
        markSeen(id);
        try {
            Files.deleteIfExists(file);
            Files.deleteIfExists(progressFile(file));
            pendingSync.sync();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        forget(file);
    }

    /** The delivery cannot be processed: keep it in {@code failed/} for a person to look at. */
    public void fail(Path file, String why) {
        String id = deliveryIdOf(file);
        LOG.error("delivery {} moved to {}: {}", id, failed, why);
        markSeen(id);
        try {
            Files.move(file, failed.resolve(file.getFileName()));
            Files.deleteIfExists(progressFile(file));
            pendingSync.sync();
            AtomicFiles.fsyncDirectory(failed);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        forget(file);
    }

    private void markSeen(String id) {
        Stamps.write(seen.resolve(id), clock.instant(), seenSync);
    }

    private void forget(Path file) {
        String name = file.getFileName().toString();
        queued.remove(Long.parseLong(name.substring(0, name.indexOf('-'))));
    }

    /** Forgets delivery ids seen longer ago than {@link #KEEP_SEEN} (not those still pending). */
    public void prune() {
        try {
            Set<String> waiting = ConcurrentHashMap.newKeySet();
            queued.values().forEach(q -> waiting.add(q.id()));
            Stamps.prune(seen, id -> validId(id) && !waiting.contains(id), clock.instant().minus(KEEP_SEEN),
                    known::remove);
        } catch (UncheckedIOException e) {
            LOG.warn(e.getMessage());
        }
    }
}
