package dev.agentx.clarify.ledger;

import com.fasterxml.jackson.annotation.JsonFormat;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.annotation.JsonSetter;
import com.fasterxml.jackson.annotation.Nulls;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.MinimalPrettyPrinter;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import dev.agentx.clarify.files.IoErrors;
import dev.agentx.clarify.files.JsonErrors;
import dev.agentx.clarify.files.StateJson;
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
 * <p>The file is JSON bound to {@link IndexFile}, one ledger per line (a full check reads it whole):
 * {@code {"version":1,"ledgers":[[1,"closed",SIZE,MTIME_NS,"(dev=..,ino=..)",null],
 * [2,"active",null,null,null,null], [3,"damaged",SIZE,MTIME_NS,KEY,"why"], ...]}}.
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

    /** The file as it is bound: its format's version and one row per ledger. */
    @JsonPropertyOrder({"version", "ledgers"})
    record IndexFile(@JsonProperty(required = true) int version, @JsonProperty(required = true) List<Row> ledgers) {
    }

    /**
     * One ledger: {@code [issue, state, size, mtime, key, problem]}, an array rather than an object
     * (a hundred thousand of them are read at a full check); what a state does not have is null.
     */
    @JsonFormat(shape = JsonFormat.Shape.ARRAY)
    @JsonPropertyOrder({"issue", "state", "size", "modified", "key", "problem"})
    record Row(@JsonProperty(required = true) int issue, @JsonProperty(required = true) String state,
               @JsonSetter(nulls = Nulls.SKIP) Long size, @JsonSetter(nulls = Nulls.SKIP) Long modified,
               @JsonSetter(nulls = Nulls.SKIP) String key, @JsonSetter(nulls = Nulls.SKIP) String problem) {
    }

    /** The reader and writer of the index file, made on first use (a full check's). */
    private static final class Binding {
        static final ObjectReader READER = StateJson.mapper().readerFor(IndexFile.class)
                .with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
        static final ObjectWriter WRITER = StateJson.mapper().writerFor(IndexFile.class).with(new RowPerLine());
    }

    /** Strict: anything but exactly the format written by {@link #save()} is refused (and the index rebuilt). */
    static Map<Integer, Entry> parse(byte[] bytes) throws IOException {
        IndexFile file = Binding.READER.readValue(bytes);
        if (file.version() != VERSION) {
            throw new IOException("version " + file.version() + " where " + VERSION + " was expected");
        }
        Map<Integer, Entry> out = new HashMap<>(Math.max(16, file.ledgers().size() * 2));
        for (Row row : file.ledgers()) {
            Entry e = entry(row);
            if (row.issue() <= 0 || out.put(row.issue(), e) != null) {
                throw new IOException("issue " + row.issue() + " is no issue number or is there twice");
            }
        }
        return out;
    }

    /** The entry a row says, if its fields are those of its state. */
    private static Entry entry(Row row) throws IOException {
        if (row == null) {
            throw new IOException("a row is null");
        }
        State state = switch (row.state()) {
            case "active" -> State.ACTIVE;
            case "closed" -> State.CLOSED;
            case "damaged" -> State.DAMAGED;
            default -> throw new IOException("unknown state '" + row.state() + "' of issue " + row.issue());
        };
        boolean signed = row.size() != null && row.modified() != null;
        boolean fits = switch (state) {
            case ACTIVE -> row.size() == null && row.modified() == null && row.key() == null && row.problem() == null;
            case CLOSED -> signed && row.problem() == null;
            case DAMAGED -> signed && row.problem() != null;
        };
        if (!fits) {
            throw new IOException("the row of issue " + row.issue() + " has not the fields of a " + row.state() + " ledger");
        }
        return state == State.ACTIVE ? Entry.ACTIVE
                : new Entry(state, new Signature(row.size(), row.modified(), row.key()), row.problem());
    }

    /** The file's layout: a line per row, so that a person can read it. */
    private static final class RowPerLine extends MinimalPrettyPrinter {
        private static final long serialVersionUID = 1L;

        @Override
        public void beforeArrayValues(JsonGenerator g) throws IOException {
            rowBreak(g);
        }

        @Override
        public void writeArrayValueSeparator(JsonGenerator g) throws IOException {
            super.writeArrayValueSeparator(g);
            rowBreak(g);
        }

        @Override
        public void writeEndArray(JsonGenerator g, int values) throws IOException {
            if (values > 0) {
                rowBreak(g);
            }
            super.writeEndArray(g, values);
        }

        /** A line break between the rows: in the array of rows, not in a row. */
        private static void rowBreak(JsonGenerator g) throws IOException {
            if (g.getOutputContext().getNestingDepth() == 2) {
                g.writeRaw('\n');
            }
        }
    }

    /**
     * Writes the index atomically, unless the file says the same already (another scanner, such as
     * the agent statuses' writer or another process, got there first). It is only a cache: a
     * failure is logged and the next scan reads more.
     */
    private void save() {
        List<Row> rows = new ArrayList<>(known.size());
        for (Map.Entry<Integer, Entry> e : new TreeMap<>(known).entrySet()) {
            Entry entry = e.getValue();
            Signature sig = entry.signature();
            rows.add(sig == null ? new Row(e.getKey(), entry.state().wire(), null, null, null, null)
                    : new Row(e.getKey(), entry.state().wire(), sig.size(), sig.modified(), sig.key(), entry.problem()));
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + known.size() * 64);
        try {
            Binding.WRITER.writeValue(bytes, new IndexFile(VERSION, rows));
            bytes.write('\n');
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
