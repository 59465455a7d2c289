package dev.agentx.clarify.ledger;

import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Ledger;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.OptionalInt;
import java.util.function.Function;
import java.util.stream.Stream;

/** Ledgers as {@code <state>/clarifications/issue-N.json}, one file per issue, written atomically under lock. */
public final class FileLedgerStore implements LedgerStore {
    private static final String PREFIX = "issue-";
    private static final String SUFFIX = ".json";

    private final Path dir;
    private final LockManager locks;
    private final LedgerCodec codec = new LedgerCodec();
    /**
     * The ledgers this process last wrote or read, with the file's signature at the time: a read
     * that finds the file unchanged (every write is a rename, which changes the signature: see
     * ActiveLedgerIndex) returns the ledger without reading and decoding it again. What makes it
     * pay: every status mirror reads the ledger its process has just written.
     */
    private final Map<Integer, Known> known = new java.util.LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Integer, Known> eldest) {
            return size() > KNOWN_LEDGERS;
        }
    };
    private static final int KNOWN_LEDGERS = 64;

    private record Known(ActiveLedgerIndex.Signature signature, Ledger ledger) {
    }

    /** @param stateDir the {@code .agentx/state} directory */
    public FileLedgerStore(Path stateDir, LockManager locks) {
        this.dir = stateDir.resolve("clarifications");
        this.locks = locks;
    }

    public Path directory() {
        return dir;
    }

    public Path fileOf(int issue) {
        return dir.resolve("issue-" + issue + ".json");
    }

    @Override
    public boolean exists(int issue) {
        return Files.exists(fileOf(issue));
    }

    @Override
    public Optional<Ledger> read(int issue) {
        ActiveLedgerIndex.Signature before = signatureOf(issue);
        if (before == null) {
            return read(issue, false);
        }
        synchronized (known) {
            Known k = known.get(issue);
            if (k != null && k.signature().equals(before)) {
                return Optional.of(k.ledger());
            }
        }
        // the signature taken before the read: a write landing in between makes the entry stale, never wrong
        Optional<Ledger> read = read(issue, false);
        read.ifPresent(l -> remember(issue, before, l));
        return read;
    }

    /** The ledger file's signature, or null if it has none (no file, or the file system does not tell). */
    private ActiveLedgerIndex.Signature signatureOf(int issue) {
        try {
            java.nio.file.attribute.BasicFileAttributes a = Files.readAttributes(fileOf(issue),
                    java.nio.file.attribute.BasicFileAttributes.class);
            return a.fileKey() == null ? null : ActiveLedgerIndex.Signature.of(a);
        } catch (IOException e) {
            return null;
        }
    }

    private void remember(int issue, ActiveLedgerIndex.Signature signature, Ledger ledger) {
        synchronized (known) {
            known.put(issue, new Known(signature, ledger));
        }
    }

    /**
     * The issue's ledger. A reader takes fields this version does not know in its stride; a writer
     * ({@code forWrite}) refuses them, since writing the ledger back would lose them.
     */
    private Optional<Ledger> read(int issue, boolean forWrite) {
        return read(issue, forWrite, null);
    }

    /** As {@link #read(int, boolean)}; {@code texts} (may be null) receives each record's text, for the write. */
    private Optional<Ledger> read(int issue, boolean forWrite, Map<ClarificationRecord, String> texts) {
        Path file = fileOf(issue);
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
        Set<String> unknown = new TreeSet<>();
        Ledger ledger = decode(file, issue, bytes, unknown, texts);
        if (forWrite && !unknown.isEmpty()) {
            throw new ClarifyException(ErrorCode.LEDGER_NEWER, "Ledger " + file + " has " + (unknown.size() == 1
                    ? "a field" : "fields") + " this version of agentx does not know (" + String.join(", ", unknown)
                    + "): a newer version wrote it. It can be read, but changing it here would lose "
                    + (unknown.size() == 1 ? "that field" : "those fields") + ", so nothing was changed. Upgrade agentx "
                    + "to change this issue's clarifications.");
        }
        return Optional.of(ledger);
    }

    /**
     * Decodes a ledger file for reading: fields this version does not know are skipped; a damaged
     * file is refused with a message that says what to do.
     */
    public Ledger decode(Path file, int issue, byte[] bytes) {
        return decode(file, issue, bytes, new TreeSet<>(), null);
    }

    private Ledger decode(Path file, int issue, byte[] bytes, Set<String> unknown,
                          Map<ClarificationRecord, String> texts) {
        Ledger ledger;
        try {
            ledger = codec.decode(bytes, unknown, texts);
        } catch (IllegalArgumentException e) {
            throw damaged(file, issue, e.getMessage());
        }
        if (ledger.issueNumber() != issue) {
            throw damaged(file, issue, "issueNumber is " + ledger.issueNumber() + " but the file is for issue " + issue);
        }
        return ledger;
    }

    private static ClarifyException damaged(Path file, int issue, String why) {
        return new ClarifyException(ErrorCode.LEDGER_DAMAGED, "Ledger " + file + " is damaged: " + why
                + ". Nothing was changed. Restore it from a backup or version control (GitHub Mode: 'agentx sync "
                + "--repo OWNER/REPO --issue " + issue + " --write' rebuilds it from the App's comments), or move "
                + "it away to start the issue afresh.");
    }

    /** Whether this JVM has read and written a ledger once: see {@link #update}. */
    private static volatile boolean warm;

    @Override
    public <T> T update(int issue, String actor, Function<Ledger, Mutation<T>> change) {
        Path file = fileOf(issue);
        if (!warm) {
            // A new process (each CLI command is one) reads and encodes the ledger once before it
            // takes the lock, so that loading and first running the codec's classes happen outside
            // the lock: with many agents starting JVMs on few cores, that first run is slow, and
            // inside the lock every waiter would wait for it.
            read(issue).ifPresent(codec::encode);
            warm = true;
        }
        return locks.withLock(file, actor, () -> {
            // the records a change leaves alone are written back as the text they were read from
            Map<ClarificationRecord, String> texts = new IdentityHashMap<>();
            Ledger current = read(issue, true, texts).orElse(Ledger.empty(issue));
            Mutation<T> m = change.apply(current);
            if (m.ledger() != null && !LedgerStore.unchanged(m.ledger(), current)) {
                Path temp = AtomicFiles.prepare(file, codec.encode(m.ledger(), texts));
                try {
                    // the rename only while the lock on disk is still ours: a takeover never loses a write
                    locks.commit(file, () -> AtomicFiles.commit(temp, file));
                } finally {
                    AtomicFiles.discard(temp);
                }
                // still under the lock: the file is the one just written
                ActiveLedgerIndex.Signature written = signatureOf(issue);
                if (written != null) {
                    remember(issue, written, m.ledger());
                }
            }
            return m.result();
        });
    }

    /** The issue number of a ledger file name ({@code issue-N.json}), or empty if it is not one. */
    public static OptionalInt issueOf(String fileName) {
        // by hand rather than with a regular expression: the monitor calls this for every file of the directory
        if (!fileName.startsWith(PREFIX) || !fileName.endsWith(SUFFIX)
                || fileName.length() <= PREFIX.length() + SUFFIX.length()) {
            return OptionalInt.empty();
        }
        String digits = fileName.substring(PREFIX.length(), fileName.length() - SUFFIX.length());
        for (int i = 0; i < digits.length(); i++) {
            if (digits.charAt(i) < '0' || digits.charAt(i) > '9') {
                return OptionalInt.empty();
            }
        }
        try {
            int n = Integer.parseInt(digits);
            return n > 0 ? OptionalInt.of(n) : OptionalInt.empty();
        } catch (NumberFormatException e) {
            return OptionalInt.empty(); // too large to be an issue number
        }
    }

    @Override
    public List<Integer> issues() {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        List<Integer> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir)) {
            files.forEach(p -> issueOf(p.getFileName().toString()).ifPresent(out::add));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + dir + ": " + e.getMessage(), e);
        }
        out.sort(null);
        return out;
    }
}
