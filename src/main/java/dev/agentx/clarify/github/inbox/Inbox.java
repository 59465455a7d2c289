package dev.agentx.clarify.github.inbox;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.files.DirectorySync;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.files.Journal;
import dev.agentx.clarify.github.Stamps;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
 * {@code pending/<seq>-<delivery>.json} ({@link DeliveryFile}: a header, then the body as
 * received) until processed (so a crash loses nothing: they are processed after restart); {@code journal} records how far each delivery got (commands done,
 * attempts) and the id of every delivery processed in the last {@link #KEEP_SEEN}, which covers
 * GitHub's manual redelivery window (deliveries of the past 3 days) with room to spare.
 * {@code failed/} keeps deliveries that could not be processed, with the reason in the log.
 *
 * <p>Accepting is built for many concurrent webhook requests: no lock is shared with the worker;
 * the delivery file is written and fsynced by the request's thread, and the directory fsync that
 * makes its name durable is shared by the requests that arrive together ({@link DirectorySync}).
 * Duplicates are told from the ids in memory: those seen and those pending, loaded at start. A
 * delivery is recorded as done in the journal (group commit, {@link Journal}) before its file
 * goes, so at every moment one of the two is on disk; a file whose id the journal has as done
 * (a crash undid its deletion) is dropped at start. Inboxes of earlier versions (a marker file per
 * id in {@code seen/}, a {@code .progress} file per delivery) are taken over at start.
 */
public final class Inbox {
    private static final Logger LOG = LoggerFactory.getLogger(Inbox.class);
    public static final Duration KEEP_SEEN = Duration.ofDays(8);
    private static final Pattern DELIVERY_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,99}");
    /** The journal is compacted when it holds more than this many records beyond twice what it must keep. */
    static final int COMPACT_SLACK = 20_000;

    private final Path pending;
    private final Path failed;
    private final Clock clock;
    private final ObjectMapper json = JsonSupport.mapper();
    private final DirectorySync pendingSync;
    private final Journal journal;
    private final AtomicLong seq = new AtomicLong();
    /** Ids of deliveries pending or seen: a second delivery with one of them is a duplicate. */
    private final Set<String> known = ConcurrentHashMap.newKeySet();
    /** Ids of deliveries done with (processed or failed), and when. */
    private final Map<String, Instant> seen = new ConcurrentHashMap<>();
    private final Map<Long, Progress> progress = new ConcurrentHashMap<>();
    private final ConcurrentSkipListMap<Long, Queued> queued = new ConcurrentSkipListMap<>();
    private final Object compaction = new Object();
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

    /**
     * One journal record. {@code op}: {@code progress} (seq, progress), {@code done} (seq, id, at:
     * processed or failed; also what a compaction keeps of a seen id, with seq 0), {@code seq}
     * (the highest number handed out, kept by a compaction so numbers are never used twice).
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Rec(String op, long seq, String id, Progress progress, Instant at) {
    }

    public Inbox(Path dir, Clock clock) {
        this.pending = dir.resolve("pending");
        this.failed = dir.resolve("failed");
        this.clock = clock;
        this.pendingSync = new DirectorySync(pending);
        try {
            Files.createDirectories(pending);
            Files.createDirectories(failed);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the inbox in " + dir + ": " + e.getMessage(), e);
        }
        this.journal = new Journal(dir.resolve("journal"));
        try {
            for (byte[] record : journal.records()) {
                apply(json.readValue(record, Rec.class));
            }
        } catch (IOException | RuntimeException e) {
            throw new IllegalStateException("cannot read the inbox journal " + journal.file() + ": " + e.getMessage(),
                    e);
        }
        try {
            List<Path> files;
            try (Stream<Path> s = Files.list(pending)) {
                files = s.filter(p -> p.getFileName().toString().endsWith(".json")
                        && !p.getFileName().toString().startsWith(".")).sorted().toList();
            }
            takeOverFiles(dir.resolve("seen"), files);
            for (Path p : files) {
                String name = p.getFileName().toString();
                long n = Long.parseLong(name.substring(0, name.indexOf('-')));
                seq.accumulateAndGet(n, Math::max);
                String id = deliveryIdOf(p);
                if (seen.containsKey(id)) {
                    Files.deleteIfExists(p); // done before a crash took the deletion with it
                    progress.remove(n);
                    continue;
                }
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
            progress.keySet().retainAll(queued.keySet());
        } catch (IOException | NumberFormatException e) {
            throw new UncheckedIOException("cannot open the inbox in " + dir + ": " + e.getMessage(),
                    e instanceof IOException io ? io : new IOException(e));
        }
        known.addAll(seen.keySet());
        compact();
    }

    private void apply(Rec r) {
        seq.accumulateAndGet(r.seq(), Math::max);
        switch (r.op()) {
            case "seq" -> { }
            case "progress" -> progress.put(r.seq(), r.progress());
            case "done" -> {
                progress.remove(r.seq());
                seen.put(r.id(), r.at());
            }
            default -> throw new IllegalStateException("unknown inbox journal record '" + r.op() + "'");
        }
    }

    /**
     * Takes an inbox of an earlier version over: its {@code seen/} markers (of deliveries no longer
     * pending: that version marked them at acceptance) and {@code .progress} files go into the
     * journal, then those files go.
     */
    private void takeOverFiles(Path seenDir, List<Path> pendingFiles) throws IOException {
        List<Path> markers = new ArrayList<>();
        if (Files.isDirectory(seenDir)) {
            try (Stream<Path> s = Files.list(seenDir)) {
                s.filter(p -> validId(p.getFileName().toString())).forEach(markers::add);
            }
        }
        List<Path> progressFiles = new ArrayList<>();
        try (Stream<Path> s = Files.list(pending)) {
            s.filter(p -> p.getFileName().toString().endsWith(".progress")).forEach(progressFiles::add);
        }
        if (markers.isEmpty() && progressFiles.isEmpty()) {
            deleteEmpty(seenDir);
            return;
        }
        Set<String> waiting = new java.util.HashSet<>();
        pendingFiles.forEach(p -> waiting.add(deliveryIdOf(p)));
        for (Path m : markers) {
            String id = m.getFileName().toString();
            if (!waiting.contains(id)) {
                record(new Rec("done", 0, id, null, Stamps.read(m)));
            }
        }
        for (Path f : progressFiles) {
            String name = f.getFileName().toString();
            long n = Long.parseLong(name.substring(0, name.indexOf('-')));
            record(new Rec("progress", n, null, json.readValue(Files.readAllBytes(f), Progress.class), null));
        }
        LOG.info("inbox: took {} seen ids and {} progress files over into {}", markers.size(), progressFiles.size(),
                journal.file());
        for (Path m : markers) {
            Files.deleteIfExists(m);
        }
        for (Path f : progressFiles) {
            Files.deleteIfExists(f);
        }
        deleteEmpty(seenDir);
    }

    private static void deleteEmpty(Path dir) {
        try {
            Files.deleteIfExists(dir);
        } catch (IOException e) {
            // not empty (temp files of an earlier version): harmless, left alone
        }
    }

    /** Appends the record durably and applies it. */
    private void record(Rec r) {
        try {
            journal.append(json.writeValueAsBytes(r));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        apply(r);
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
            AtomicFiles.write(file, DeliveryFile.encode(json, new InboundDelivery(id, event, now, body)), pendingSync);
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
            return DeliveryFile.decode(json, Files.readAllBytes(file));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read inbox entry " + file + ": " + e.getMessage(), e);
        }
    }

    private static long seqOf(Path file) {
        String name = file.getFileName().toString();
        return Long.parseLong(name.substring(0, name.indexOf('-')));
    }

    public Progress progress(Path file) {
        return progress.getOrDefault(seqOf(file), Progress.NONE);
    }

    public void saveProgress(Path file, Progress p) {
        record(new Rec("progress", seqOf(file), null, p, null));
    }

    /** The delivery is processed: its id is kept as seen, its file goes. */
    public void done(Path file) {
        record(new Rec("done", seqOf(file), deliveryIdOf(file), null, clock.instant()));
        try {
            Files.deleteIfExists(file); // no fsync: should a crash undo it, the start drops the file
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        queued.remove(seqOf(file));
        maybeCompact();
    }

    /** The delivery cannot be processed: keep it in {@code failed/} for a person to look at. */
    public void fail(Path file, String why) {
        String id = deliveryIdOf(file);
        LOG.error("delivery {} moved to {}: {}", id, failed, why);
        try {
            Files.move(file, failed.resolve(file.getFileName()));
            AtomicFiles.fsyncDirectory(failed);
            pendingSync.sync();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        record(new Rec("done", seqOf(file), id, null, clock.instant()));
        queued.remove(seqOf(file));
    }

    /** Forgets delivery ids seen longer ago than {@link #KEEP_SEEN} and compacts the journal. */
    public void prune() {
        try {
            compact();
        } catch (RuntimeException e) {
            LOG.warn("inbox: {}", e.getMessage());
        }
    }

    private void maybeCompact() {
        if (journal.size() > 2L * (seen.size() + progress.size()) + COMPACT_SLACK) {
            prune();
        }
    }

    /** Rewrites the journal from its own records (so it cannot miss one appended meanwhile). */
    private void compact() {
        synchronized (compaction) {
            Instant cutoff = clock.instant().minus(KEEP_SEEN);
            journal.compact(records -> {
                Map<Long, Progress> prog = new java.util.TreeMap<>();
                Map<String, Instant> done = new java.util.LinkedHashMap<>();
                List<byte[]> out = new ArrayList<>();
                try {
                    long max = seq.get();
                    for (byte[] b : records) {
                        Rec r = json.readValue(b, Rec.class);
                        max = Math.max(max, r.seq());
                        switch (r.op()) {
                            case "progress" -> prog.put(r.seq(), r.progress());
                            case "done" -> {
                                prog.remove(r.seq());
                                done.put(r.id(), r.at());
                            }
                            default -> { }
                        }
                    }
                    out.add(json.writeValueAsBytes(new Rec("seq", max, null, null, null)));
                    for (Map.Entry<String, Instant> e : done.entrySet()) {
                        if (!e.getValue().isBefore(cutoff)) {
                            out.add(json.writeValueAsBytes(new Rec("done", 0, e.getKey(), null, e.getValue())));
                        }
                    }
                    for (Map.Entry<Long, Progress> e : prog.entrySet()) {
                        out.add(json.writeValueAsBytes(new Rec("progress", e.getKey(), null, e.getValue(), null)));
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot compact the inbox journal: " + e.getMessage(), e);
                }
                return out;
            });
            seen.entrySet().removeIf(e -> {
                boolean old = e.getValue().isBefore(cutoff);
                if (old) {
                    known.remove(e.getKey());
                }
                return old;
            });
        }
    }
}
