package dev.agentx.clarify.ledger;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import dev.agentx.clarify.files.IoErrors;
import dev.agentx.clarify.files.JsonErrors;
import dev.agentx.clarify.files.JsonNumbers;
import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.files.RuntimeFolder;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.Ledger;
import java.io.ByteArrayOutputStream;
import java.io.FileInputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds the ledgers that can change a finding without looking at the others. A pass reads the
 * ledgers marked in {@code <state>/monitor-active/} ({@link ActiveMarks}: every ledger with an
 * active record that agentx wrote, and those found damaged), and no other: its cost follows the
 * number of active ledgers, not of all ledgers.
 *
 * <p>A ledger changed by other means than agentx (a person's edit, a restore, a deletion) has no
 * mark to follow. For those, a pass makes a full check when the last one is a minute old or more
 * ({@link #FULL_CHECK_EVERY}, by the clock; the index file's modification time is the time of the
 * last check), or when {@code <state>/monitor-index.json} is missing: it lists the ledger directory and stats each file, reads those not known
 * closed or damaged at their signature (size, modification time in nanoseconds and file key), makes
 * the marks that are missing, writes the index if what it knows changed, and stamps it with the
 * time of the check.
 *
 * <p>Why the signatures stay right with any number of writers: every ledger write replaces the file
 * by an atomic rename (a new inode, a new modification time), so any write changes the signature.
 * The signature is taken <em>before</em> the file is read, so the content judged is never older
 * than the signature stored with it. Entries only ever cause extra reads, never missed ones, so
 * concurrent scanners may overwrite each other's index freely (each write is atomic). Active
 * ledgers carry no signature: they are read on every pass anyway.
 *
 * <p>The file is JSON, one ledger per line, read and written by streaming (a full check parses it
 * whole): {@code {"version":1,"ledgers":[[1,"closed",SIZE,MTIME_NS,"(dev=..,ino=..)"], [2,"active"],
 * [3,"damaged",SIZE,MTIME_NS,KEY,"why"], ...]}}.
 */
public final class ActiveLedgerIndex implements ActiveLedgers {
    /** Looked up on first use: the CLI must not start the logging system unless something is logged. */
    private static Logger log() {
        return LoggerFactory.getLogger(ActiveLedgerIndex.class);
    }
    static final int VERSION = 1;
    /** A class rather than Comparator.comparingInt: a method reference costs a fresh CLI process its bootstrap. */
    private static final Comparator<Ledger> BY_ISSUE = new Comparator<>() {
        @Override
        public int compare(Ledger a, Ledger b) {
            return Integer.compare(a.issueNumber(), b.issueNumber());
        }
    };
    private static final JsonFactory JSON = new JsonFactory();

    private final FileLedgerStore store;
    private final Path indexFile;
    /** What this instance knows, loaded from the index file on the first scan. */
    private Map<Integer, Entry> known;
    private int ledgersRead;
    /** How old the last full check may be before a pass makes the next one. */
    static final java.time.Duration FULL_CHECK_EVERY = java.time.Duration.ofMinutes(1);

    public ActiveLedgerIndex(FileLedgerStore store, Path indexFile) {
        this.store = store;
        this.indexFile = indexFile;
    }

    public Path file() {
        return indexFile;
    }

    enum State {
        ACTIVE, CLOSED, DAMAGED;

        String wire() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /*
     * equals and hashCode of these two records are written out: a record's generated ones are
     * bootstrapped through invokedynamic on first use, which costs a fresh CLI process more than
     * the whole comparison of the index (every scan compares the new index with the old).
     */

    /** A ledger file's identity: any write (an atomic rename) changes it. */
    record Signature(long size, long modified, String key) {
        static Signature of(BasicFileAttributes a) {
            Object k = a.fileKey();
            return new Signature(a.size(), a.lastModifiedTime().to(TimeUnit.NANOSECONDS), k == null ? null : k.toString());
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Signature s && s.size == size && s.modified == modified && Objects.equals(s.key, key);
        }

        @Override
        public int hashCode() {
            return (Long.hashCode(size) * 31 + Long.hashCode(modified)) * 31 + Objects.hashCode(key);
        }
    }

    /** One ledger as last judged. Closed and damaged entries carry the signature they were judged at. */
    record Entry(State state, Signature signature, String problem) {
        static final Entry ACTIVE = new Entry(State.ACTIVE, null, null);

        boolean matches(Signature s) {
            return state != State.ACTIVE && s.equals(signature);
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Entry e && e.state == state && Objects.equals(e.signature, signature)
                    && Objects.equals(e.problem, problem);
        }

        @Override
        public int hashCode() {
            return (state.hashCode() * 31 + Objects.hashCode(signature)) * 31 + Objects.hashCode(problem);
        }
    }

    /**
     * The ledgers that can change a finding: a full check when one is due ({@link #fullCheckDue}),
     * else only the marked ones ({@link ActiveMarks}), read and judged afresh.
     */
    @Override
    public synchronized Scan scan() {
        long now = store.clock().millis();
        return fullCheckDue(now) ? fullCheck(now) : marked();
    }

    /**
     * Whether this pass must look at every ledger file: when the index file is missing or cannot be
     * used, when its last full check is {@link #FULL_CHECK_EVERY} old or more, or when the clock
     * stands before it (turned back).
     */
    private boolean fullCheckDue(long now) {
        long checked;
        try {
            // looked at on every pass, not remembered: another process's check counts, a deleted index is seen
            checked = Files.getLastModifiedTime(indexFile).toMillis();
        } catch (IOException e) {
            return true; // no index yet
        }
        return now >= checked + FULL_CHECK_EVERY.toMillis() || now < checked;
    }

    /** The marked ledgers, each read and judged: what a pass between full checks reads, and nothing else. */
    private Scan marked() {
        List<Ledger> active = new ArrayList<>();
        Map<Integer, String> damaged = new HashMap<>();
        for (int issue : store.activeMarks().issues()) {
            Path file = store.fileOf(issue);
            byte[] bytes;
            try {
                bytes = readLedger(file);
            } catch (NoSuchFileException e) {
                continue; // removed, or marked by a writer that has yet to put it in place
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + file + ": " + IoErrors.why(e), e);
            }
            ledgersRead++;
            try {
                Ledger ledger = store.decode(file, issue, bytes);
                if (!ledger.active().isEmpty()) {
                    active.add(ledger);
                }
            } catch (ClarifyException e) {
                damaged.put(issue, e.getMessage());
            }
        }
        active.sort(BY_ISSUE);
        return new Scan(active, damaged);
    }

    /**
     * Every ledger file listed and stat'ed, those not known closed or damaged at their signature
     * read; the marks of active and damaged ledgers made where missing (a ledger put in place by
     * other means than agentx); the index written with the time of this check.
     */
    private Scan fullCheck(long now) {
        if (known == null) {
            known = load();
        }
        Map<Integer, Entry> next = new HashMap<>(Math.max(16, known.size() * 2));
        List<Ledger> active = new ArrayList<>();
        Map<Integer, String> damaged = new HashMap<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(store.directory())) {
            for (Path file : files) {
                OptionalInt n = FileLedgerStore.issueOf(file.getFileName().toString());
                if (n.isPresent()) {
                    judge(n.getAsInt(), file, next, active, damaged);
                }
            }
        } catch (NoSuchFileException | NotDirectoryException e) {
            // no ledger yet: nothing to remember, nothing written
            known = next;
            return new Scan(active, damaged);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + store.directory() + ": " + IoErrors.why(e), e);
        }
        markMissing(active, damaged);
        known = next;
        save();
        stampChecked(now);
        active.sort(BY_ISSUE);
        return new Scan(active, damaged);
    }

    /** Marks each active and damaged ledger of a full check that has no mark (a mark is never removed here: see ActiveMarks). */
    private void markMissing(List<Ledger> active, Map<Integer, String> damaged) {
        java.util.Set<Integer> marked = new java.util.HashSet<>();
        for (int issue : store.activeMarks().issues()) {
            marked.add(issue);
        }
        List<Integer> missing = new ArrayList<>();
        for (Ledger l : active) {
            if (!marked.contains(l.issueNumber())) {
                missing.add(l.issueNumber());
            }
        }
        for (int issue : damaged.keySet()) {
            if (!marked.contains(issue)) {
                missing.add(issue);
            }
        }
        try {
            for (int issue : missing) {
                store.activeMarks().mark(issue);
            }
        } catch (UncheckedIOException e) {
            // without its mark a ledger is read at each full check only; the next check tries again
            log().warn("monitor mark not made: {}", e.getMessage());
        }
    }

    /** How many ledger files this index has read and decoded so far (closed, unchanged ones are not read). */
    public synchronized int ledgersRead() {
        return ledgersRead;
    }

    private void judge(int issue, Path file, Map<Integer, Entry> next, List<Ledger> active, Map<Integer, String> damaged) {
        Signature sig;
        try {
            sig = Signature.of(Files.readAttributes(file, BasicFileAttributes.class));
        } catch (NoSuchFileException e) {
            return; // removed while we looked
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + IoErrors.why(e), e);
        }
        Entry old = known.get(issue);
        if (old != null && old.matches(sig)) {
            next.put(issue, old);
            if (old.state() == State.DAMAGED) {
                damaged.put(issue, old.problem());
            }
            return;
        }
        byte[] bytes;
        try {
            bytes = readLedger(file);
        } catch (NoSuchFileException e) {
            return;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + IoErrors.why(e), e);
        }
        ledgersRead++;
        Ledger ledger;
        try {
            ledger = store.decode(file, issue, bytes);
        } catch (ClarifyException e) {
            next.put(issue, new Entry(State.DAMAGED, sig, e.getMessage()));
            damaged.put(issue, e.getMessage());
            return;
        }
        if (ledger.active().isEmpty()) {
            next.put(issue, new Entry(State.CLOSED, sig, null));
        } else {
            next.put(issue, Entry.ACTIVE);
            active.add(ledger);
        }
    }

    /**
     * The ledger's bytes, through {@link FileInputStream}: in a fresh JVM that path runs far less
     * code than {@link Files#readAllBytes} (no channel, no option sets), which a list pays once per
     * active ledger. Any failure to open is left to {@code Files.readAllBytes}, so the exceptions
     * (a {@link NoSuchFileException} for a ledger removed meanwhile) and their messages are its own.
     */
    private static byte[] readLedger(Path file) throws IOException {
        FileInputStream in;
        try {
            in = new FileInputStream(file.toFile());
        } catch (FileNotFoundException | UnsupportedOperationException e) {
            return Files.readAllBytes(file);
        }
        try (in) {
            return in.readAllBytes();
        }
    }

    private Map<Integer, Entry> load() {
        try {
            return parse(Files.readAllBytes(indexFile));
        } catch (NoSuchFileException e) {
            return new HashMap<>();
        } catch (IOException | RuntimeException e) {
            String why = e instanceof JsonProcessingException j ? JsonErrors.describe(j) : e.getMessage();
            log().warn("{} cannot be used ({}); rebuilding it from the ledgers", indexFile, why);
            return new HashMap<>();
        }
    }

    /**
     * Gives the index file the time of this full check as its modification time, by the clock the
     * passes go by: the next pass finds when the last check was made with one stat of the file,
     * and a check that found nothing new leaves the file's content alone.
     */
    private void stampChecked(long now) {
        try {
            Files.setLastModifiedTime(indexFile, java.nio.file.attribute.FileTime.fromMillis(now));
        } catch (IOException e) {
            // no index file (it could not be written: logged); the next pass checks again
        }
    }

    /** Strict: anything but exactly the format written by {@link #save()} is refused (and the index rebuilt). */
    static Map<Integer, Entry> parse(byte[] bytes) throws IOException {
        Map<Integer, Entry> out = null;
        Integer version = null;
        try (JsonParser p = JSON.createParser(bytes)) {
            expect(p, p.nextToken() == JsonToken.START_OBJECT, "an object");
            for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
                expect(p, t == JsonToken.FIELD_NAME, "a field");
                String field = p.currentName();
                JsonToken value = p.nextToken();
                if (field.equals("version") && value == JsonToken.VALUE_NUMBER_INT) {
                    version = JsonNumbers.intValue(p);
                } else if (field.equals("ledgers") && value == JsonToken.START_ARRAY) {
                    out = entries(p, bytes.length / 40); // an entry takes about 40 to 70 bytes
                } else {
                    expect(p, false, "version or ledgers");
                }
            }
            expect(p, p.nextToken() == null, "the end");
        }
        if (version == null || version != VERSION || out == null) {
            throw new IOException("version " + version + " where " + VERSION + " was expected, or no ledgers");
        }
        return out;
    }

    private static Map<Integer, Entry> entries(JsonParser p, int sizeHint) throws IOException {
        Map<Integer, Entry> out = new HashMap<>(Math.max(16, sizeHint * 2));
        for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken()) {
            expect(p, t == JsonToken.START_ARRAY, "[issue, state, ...]");
            expect(p, p.nextToken() == JsonToken.VALUE_NUMBER_INT, "an issue number");
            int issue = JsonNumbers.intValue(p);
            expect(p, p.nextToken() == JsonToken.VALUE_STRING, "a state");
            State state = switch (p.getText()) {
                case "active" -> State.ACTIVE;
                case "closed" -> State.CLOSED;
                case "damaged" -> State.DAMAGED;
                default -> throw new IOException("unknown state '" + p.getText() + "'");
            };
            Entry e = Entry.ACTIVE;
            if (state != State.ACTIVE) {
                expect(p, p.nextToken() == JsonToken.VALUE_NUMBER_INT, "a size");
                long size = JsonNumbers.longValue(p);
                expect(p, p.nextToken() == JsonToken.VALUE_NUMBER_INT, "a modification time");
                long modified = JsonNumbers.longValue(p);
                JsonToken k = p.nextToken();
                expect(p, k == JsonToken.VALUE_STRING || k == JsonToken.VALUE_NULL, "a file key");
                String key = k == JsonToken.VALUE_NULL ? null : p.getText();
                String problem = null;
                if (state == State.DAMAGED) {
                    expect(p, p.nextToken() == JsonToken.VALUE_STRING, "a problem");
                    problem = p.getText();
                }
                e = new Entry(state, new Signature(size, modified, key), problem);
            }
            expect(p, p.nextToken() == JsonToken.END_ARRAY, "the end of the entry");
            expect(p, issue > 0 && out.put(issue, e) == null, "each issue once");
        }
        return out;
    }

    private static void expect(JsonParser p, boolean ok, String what) throws IOException {
        if (!ok) {
            throw new IOException("expected " + what + " at line " + p.currentLocation().getLineNr());
        }
    }

    /**
     * Writes the index atomically, unless the file says the same already (another scanner, such as
     * the agent statuses' writer or another process, got there first). It is only a cache: a
     * failure is logged and the next scan reads more.
     */
    private void save() {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + known.size() * 64);
        try (JsonGenerator g = JSON.createGenerator(bytes)) {
            g.writeStartObject();
            g.writeNumberField("version", VERSION);
            g.writeArrayFieldStart("ledgers");
            for (Map.Entry<Integer, Entry> e : new TreeMap<>(known).entrySet()) {
                g.writeRaw('\n');
                g.writeStartArray();
                g.writeNumber(e.getKey());
                Entry entry = e.getValue();
                g.writeString(entry.state().wire());
                if (entry.state() != State.ACTIVE) {
                    g.writeNumber(entry.signature().size());
                    g.writeNumber(entry.signature().modified());
                    g.writeString(entry.signature().key());
                    if (entry.state() == State.DAMAGED) {
                        g.writeString(entry.problem());
                    }
                }
                g.writeEndArray();
            }
            g.writeRaw('\n');
            g.writeEndArray();
            g.writeEndObject();
            g.writeRaw('\n');
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        byte[] content = bytes.toByteArray();
        try {
            if (java.util.Arrays.equals(content, Files.readAllBytes(indexFile))) {
                return; // another scanner of the same ledgers wrote it already
            }
        } catch (IOException e) {
            // none yet, or unreadable: written below
        }
        try {
            AtomicFiles.write(indexFile, RuntimeFolder.enter(RuntimeFolder.of(indexFile)), content);
        } catch (UncheckedIOException e) {
            log().warn("monitor index not written: {}", e.getMessage());
        }
    }
}
