package dev.agentx.clarify.ledger;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.Ledger;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
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
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds the active ledgers without re-reading the closed ones: {@code <state>/monitor-index.json}
 * remembers, per ledger file, whether it was closed (every record resolved or abandoned) or
 * damaged, together with the file's signature at the time: size, modification time in
 * nanoseconds and file key (device and inode). A scan lists the ledger directory and stats each
 * file; a closed or damaged ledger whose signature is unchanged is not read; every other ledger
 * (new, changed, or active last time) is read and judged afresh.
 *
 * <p>Why this stays right with any number of writers: every ledger write replaces the file by an
 * atomic rename (a new inode, a new modification time), so any write changes the signature. The
 * signature is taken <em>before</em> the file is read, so the content judged is never older than
 * the signature stored with it: if a write lands in between, the stored signature is already out
 * of date and the next scan reads the file again. Entries only ever cause extra reads, never
 * missed ones, so concurrent scanners may overwrite each other's index freely (each write is
 * atomic). A missing, damaged or other-version index is rebuilt from the ledgers. Active ledgers
 * carry no signature: they are read on every scan anyway, and a pass that only changes active
 * records (marking stale, escalating) leaves the index file untouched.
 */
public final class ActiveLedgerIndex implements ActiveLedgers {
    private static final Logger LOG = LoggerFactory.getLogger(ActiveLedgerIndex.class);
    static final int VERSION = 1;

    private final FileLedgerStore store;
    private final Path indexFile;
    private final ObjectMapper mapper = JsonSupport.mapper()
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .setSerializationInclusion(JsonInclude.Include.NON_NULL);
    /** What this instance knows, loaded from the index file on the first scan. */
    private Map<Integer, Entry> known;

    public ActiveLedgerIndex(FileLedgerStore store, Path indexFile) {
        this.store = store;
        this.indexFile = indexFile;
    }

    public Path file() {
        return indexFile;
    }

    enum State {
        @JsonProperty("active") ACTIVE,
        @JsonProperty("closed") CLOSED,
        @JsonProperty("damaged") DAMAGED
    }

    /** One ledger as last judged. Closed and damaged entries carry the file signature they were judged at. */
    @JsonPropertyOrder({"state", "size", "modified", "key", "problem"})
    record Entry(State state, Long size, Long modified, String key, String problem) {
        static final Entry ACTIVE = new Entry(State.ACTIVE, null, null, null, null);

        boolean matches(Signature s) {
            return state != State.ACTIVE && Objects.equals(size, s.size) && Objects.equals(modified, s.modified)
                    && Objects.equals(key, s.key);
        }
    }

    record IndexFile(int version, TreeMap<Integer, Entry> ledgers) {
    }

    private record Signature(Long size, Long modified, String key) {
        static Signature of(BasicFileAttributes a) {
            Object k = a.fileKey();
            return new Signature(a.size(), a.lastModifiedTime().to(TimeUnit.NANOSECONDS), k == null ? null : k.toString());
        }
    }

    @Override
    public synchronized Scan scan() {
        if (known == null) {
            known = load();
        }
        Map<Integer, Entry> next = new HashMap<>();
        List<Ledger> active = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(store.directory())) {
            for (Path file : files) {
                OptionalInt n = FileLedgerStore.issueOf(file.getFileName().toString());
                if (n.isPresent()) {
                    judge(n.getAsInt(), file, next, active, problems);
                }
            }
        } catch (NoSuchFileException | NotDirectoryException e) {
            // no ledger yet
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + store.directory() + ": " + e.getMessage(), e);
        }
        if (!next.equals(known)) {
            known = next;
            save();
        }
        active.sort(Comparator.comparingInt(Ledger::issueNumber));
        problems.sort(null);
        return new Scan(next.size(), active, problems);
    }

    private void judge(int issue, Path file, Map<Integer, Entry> next, List<Ledger> active, List<String> problems) {
        Signature sig;
        try {
            sig = Signature.of(Files.readAttributes(file, BasicFileAttributes.class));
        } catch (NoSuchFileException e) {
            return; // removed while we looked
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
        Entry old = known.get(issue);
        if (old != null && old.matches(sig)) {
            next.put(issue, old);
            if (old.state() == State.DAMAGED) {
                problems.add(old.problem());
            }
            return;
        }
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
        Ledger ledger;
        try {
            ledger = store.decode(file, issue, bytes);
        } catch (ClarifyException e) {
            next.put(issue, new Entry(State.DAMAGED, sig.size(), sig.modified(), sig.key(), e.getMessage()));
            problems.add(e.getMessage());
            return;
        }
        if (ledger.active().isEmpty()) {
            next.put(issue, new Entry(State.CLOSED, sig.size(), sig.modified(), sig.key(), null));
        } else {
            next.put(issue, Entry.ACTIVE);
            active.add(ledger);
        }
    }

    private Map<Integer, Entry> load() {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(indexFile);
        } catch (NoSuchFileException e) {
            return new HashMap<>();
        } catch (IOException e) {
            LOG.warn("cannot read {}, rebuilding it from the ledgers: {}", indexFile, e.getMessage());
            return new HashMap<>();
        }
        try {
            IndexFile f = mapper.readValue(bytes, IndexFile.class);
            if (f == null || f.version() != VERSION || f.ledgers() == null || f.ledgers().values().stream()
                    .anyMatch(e -> e == null || e.state() == null)) {
                LOG.warn("{} is of another version or incomplete; rebuilding it from the ledgers", indexFile);
                return new HashMap<>();
            }
            return new HashMap<>(f.ledgers());
        } catch (JsonProcessingException e) {
            LOG.warn("{} is damaged ({}); rebuilding it from the ledgers", indexFile, LedgerCodec.describe(e));
            return new HashMap<>();
        } catch (IOException e) {
            LOG.warn("cannot read {}, rebuilding it from the ledgers: {}", indexFile, e.getMessage());
            return new HashMap<>();
        }
    }

    /** Writes the index atomically. It is only a cache: a failure is logged and the next scan reads more. */
    private void save() {
        try {
            String json = mapper.writeValueAsString(new IndexFile(VERSION, new TreeMap<>(known)));
            AtomicFiles.write(indexFile, (json + "\n").getBytes(StandardCharsets.UTF_8));
        } catch (JsonProcessingException | UncheckedIOException e) {
            LOG.warn("monitor index not written: {}", e.getMessage());
        }
    }
}
