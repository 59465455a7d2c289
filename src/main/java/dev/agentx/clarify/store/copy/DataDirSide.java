package dev.agentx.clarify.store.copy;

import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.store.Acknowledged;
import dev.agentx.clarify.store.RecoveryPosition;
import dev.agentx.clarify.store.RepositoryState;
import dev.agentx.clarify.store.files.DataDirectory;
import dev.agentx.clarify.store.files.FileDeliveryQueue;
import dev.agentx.clarify.store.files.OutboxJournal;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.function.Function;

/**
 * A data folder as one end of a copy, held for the copy as a server holds it: its repositories
 * under {@code repos/}, the issue states its server recorded, its {@code recovery.json} and its
 * {@code inbox/}.
 */
final class DataDirSide implements Side {
    private final Path root;
    private final AutoCloseable held;
    private final DataDirectory dir;
    private final Path inbox;
    private final Function<Path, IssueStates> dataDirStates;
    private IssueStates states; // read on first use: only a source's are
    private java.util.Map<String, com.fasterxml.jackson.databind.JsonNode> journalNotes; // the same

    private DataDirSide(Path root, AutoCloseable held, LockManager locks, Function<Path, IssueStates> dataDirStates) {
        this.root = root;
        this.held = held;
        this.dir = new DataDirectory(root, locks);
        this.inbox = root.resolve("inbox");
        this.dataDirStates = dataDirStates;
    }

    static DataDirSide open(Path root, LockManager locks, Function<Path, IssueStates> dataDirStates) {
        // held for the copy, as a server holds it; a folder that is not there yet has no server
        AutoCloseable held = Files.isDirectory(root) ? DataDirectory.lockForCopy(root) : () -> { };
        return new DataDirSide(root, held, locks, dataDirStates);
    }

    @Override
    public dev.agentx.clarify.store.RepositoryRecords records() {
        return dir.records();
    }

    @Override
    public List<String> repositories() {
        return dir.repositories();
    }

    @Override
    public RepositoryState repository(String repo) {
        return dir.repository(repo);
    }

    @Override
    public SortedMap<Integer, String> issueStates(String repo) {
        if (states == null) {
            states = dataDirStates.apply(root);
        }
        return states.of(repo);
    }

    @Override
    public void handOver(String repo, SortedMap<Integer, String> states) {
        // the state file 'agentx sync --write' writes, which the server prefers to its
        // outbox's note and replaces with one (docs/github-app.md)
        Path github = dir.stateDirOf(repo).resolve("github");
        states.forEach((issue, json) -> AtomicFiles.write(github.resolve("issue-" + issue + ".json"),
                json.getBytes(StandardCharsets.UTF_8)));
    }

    @Override
    public SortedMap<String, String> notes(String repo, List<String> prefixes) {
        SortedMap<String, String> out = new java.util.TreeMap<>();
        if (journalNotes == null) { // the journal read once for every repository
            journalNotes = OutboxJournal.readOnly(root.resolve("outbox").resolve("journal")).notes();
        }
        journalNotes.forEach((name, value) -> {
            if (prefixes.stream().anyMatch(name::startsWith)) {
                out.put(name, value.toString());
            }
        });
        // handed over by an earlier copy and not taken in by a server yet: newer than the journal's
        HandedOverNotes.read(HandedOverNotes.fileIn(dir.stateDirOf(repo))).forEach((name, json) -> {
            if (prefixes.stream().anyMatch(name::startsWith)) {
                out.put(name, json);
            }
        });
        return out;
    }

    @Override
    public void handOverNotes(String repo, SortedMap<String, String> notes) {
        // in the state folder, which the move back to files carries into the data dir (its outbox stays)
        HandedOverNotes.write(HandedOverNotes.fileIn(dir.stateDirOf(repo)), notes);
    }

    @Override
    public RecoveryPosition recovery() {
        return RecoveryPosition.file(dir.recoveryFile());
    }

    @Override
    public Acknowledged acknowledged() {
        return FileDeliveryQueue.acknowledged(inbox);
    }

    @Override
    public Optional<String> replicaName() {
        return dir.existingReplicaName();
    }

    @Override
    public Runnable carry(Acknowledged deliveries, String holder) {
        // one server per data dir holds all of them: no holder to name
        // before opening it: what opening changes (a torn last record cut off, a segment of
        // deliveries all done with deleted, a new one to append to) is what a server's start does
        InboxAppends before = InboxAppends.before(inbox);
        FileDeliveryQueue queue = null;
        try {
            queue = new FileDeliveryQueue(inbox, Clock.systemUTC());
            queue.carry(deliveries);
        } catch (RuntimeException e) {
            if (queue != null) {
                queue.close();
            }
            try {
                before.takeBack();
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        queue.close();
        return before::takeBack;
    }

    @Override
    public void forget(String repo, Set<Integer> issues, Set<String> notes) {
        Path state = dir.stateDirOf(repo);
        List<Path> files = new ArrayList<>(List.of(state.resolve("agent-status.json"),
                state.resolve("events.jsonl"), state.resolve("monitor-index.json")));
        if (!notes.isEmpty()) {
            files.add(HandedOverNotes.fileIn(state));
        }
        issues.forEach(issue -> files.add(state.resolve("github").resolve("issue-" + issue + ".json")));
        try {
            dir.repository(repo).ledgers().issues().forEach(issue -> files.add(
                    state.resolve("clarifications").resolve("issue-" + issue + ".json")));
            for (Path file : files) {
                Files.deleteIfExists(file);
            }
            deleteTree(state.resolve(dev.agentx.clarify.ledger.FileLedgerStore.OPEN_RECORDS));
            deleteTree(state.resolve(dev.agentx.clarify.ledger.FileLedgerStore.MONITOR_ACTIVE));
        } catch (IOException e) {
            throw new UncheckedIOException(e.getMessage(), e);
        }
    }

    /** Removes {@code dir} and all it holds; nothing when it is missing. */
    private static void deleteTree(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (java.util.stream.Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    @Override
    public void close() {
        try {
            held.close();
        } catch (Exception e) {
            // the kernel releases the lock when the process ends
        }
    }
}
