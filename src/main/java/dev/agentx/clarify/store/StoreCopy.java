package dev.agentx.clarify.store;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentx.clarify.events.ClarificationEvent;
import dev.agentx.clarify.events.EventLog;
import dev.agentx.clarify.events.JsonlEventLog;
import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.ledger.LedgerCodec;
import dev.agentx.clarify.ledger.LedgerStore.Mutation;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.status.AgentStatus;
import dev.agentx.clarify.status.AgentStatusCodec;
import dev.agentx.clarify.store.files.DataDirectory;
import dev.agentx.clarify.store.files.FileDeliveryQueue;
import dev.agentx.clarify.store.postgres.DatabaseUrl;
import dev.agentx.clarify.store.postgres.PgDeliveryQueue;
import dev.agentx.clarify.store.postgres.PgNotes;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * {@code agentx store copy}: every repository's ledgers, agent statuses and events from one store
 * to another (a data folder to PostgreSQL, or back). The destination must hold nothing for the
 * repositories copied, so that a copy never merges two histories. Every repository of the source is
 * read and checked before anything is written, so a source that cannot be copied whole (an event
 * log line that cannot be read, a damaged ledger) writes nothing. Each side is then counted and
 * checksummed from what it holds (the destination read back after the copy), over the documents in
 * their canonical encoding, so a copy that lost or changed anything is reported as failed. A copy
 * that fails while writing (the database gone, a full disk) or does not match removes what it
 * wrote from the destination again, so it can simply be run again.
 *
 * <p>The webhook deliveries the server acknowledged and has not done with go too, with the ids of
 * those it did with lately (a data dir's inbox, a database's delivery tables): a server on the
 * destination never reads the source's queue, and GitHub, which had its acknowledgement, sends
 * none of them again. They are carried after the repositories, counted and checksummed the same way.
 */
public final class StoreCopy {
    /** One side of a copy: {@code files:DIR} (a data folder) or a PostgreSQL URL. */
    public sealed interface Location {
        static Location parse(String text, Map<String, String> env) {
            if (text.startsWith("files:")) {
                String dir = text.substring("files:".length());
                if (dir.isBlank()) {
                    throw new IllegalArgumentException("'files:' names no folder: give files:/var/lib/agentx");
                }
                return new Files(Path.of(dir));
            }
            if (DatabaseUrl.looksLikeOne(text)) {
                return new Database(DatabaseUrl.parse(text, env));
            }
            throw new IllegalArgumentException("'" + DatabaseUrl.redact(text) + "' is neither files:DIR (the server's "
                    + "AGENTX_DATA_DIR) nor a PostgreSQL URL (postgresql://USER:PASSWORD@HOST:5432/DATABASE)");
        }
    }

    public record Files(Path dir) implements Location {
        @Override
        public String toString() {
            return "files:" + dir;
        }
    }

    public record Database(DatabaseUrl url) implements Location {
        @Override
        public String toString() {
            return url.toString();
        }
    }

    /** What one side holds for one repository. */
    public record Tally(int ledgers, int records, int statuses, int events, String checksum) {
    }

    /**
     * One repository copied: the source's tally and the destination's, read back, and how many
     * issues' GitHub states (what the server posted on each) were handed over with it.
     */
    public record Copied(String repo, Tally source, Tally destination, int issueStates) {
        public boolean same() {
            return source.equals(destination);
        }
    }

    /**
     * What became of the recovery pass's position (where the server stopped asking GitHub for
     * missed deliveries, and what it asked for), which the copy hands over so that the server on
     * the destination does not ask GitHub again for three days of deliveries it never received
     * there.
     */
    public enum Recovery {
        HANDED_OVER("the recovery pass's position handed over"),
        /** The destination has one of its own, which it keeps. */
        DESTINATION_HOLDS_ONE("the destination's recovery position kept"),
        NONE_AT_SOURCE("no recovery position at the source"),
        /** The source's is not JSON; the server on the destination scans GitHub's three days once. */
        UNREADABLE_AT_SOURCE("the source's recovery position is unreadable, not handed over");

        private final String words;

        Recovery(String words) {
            this.words = words;
        }

        @Override
        public String toString() {
            return words;
        }
    }

    /**
     * What one side's delivery queue holds of what a copy carries: deliveries acknowledged and not
     * done with, ids of deliveries done with, and a SHA-256 over both (each delivery as received,
     * with its failed attempts and next try; each id with when it was done with).
     */
    public record DeliveryTally(int waiting, int done, String checksum) {
    }

    /**
     * The deliveries carried with the copy: the source's tally and the destination's, read back;
     * how many of the source's the destination had received already (left as they are there, not
     * counted in the tallies); and how many waiting deliveries of repositories not copied (with
     * {@code --repo}) were left for the copy of their repository.
     */
    public record Deliveries(DeliveryTally source, DeliveryTally destination, int alreadyThere, int left) {
        public boolean same() {
            return source.equals(destination);
        }
    }

    /** The repositories copied, the deliveries carried with them, and what became of the recovery position. */
    public record Result(List<Copied> repositories, Deliveries deliveries, Recovery recovery) {
    }

    /** An opened store: its repositories and their state. */
    private interface Side extends AutoCloseable {
        List<String> repositories();

        RepositoryState repository(String repo);

        /**
         * What the server put on GitHub for each issue of {@code repo} (the comments posted per
         * record, the labels set), as JSON by issue number: a database's shared notes, a data
         * dir's outbox records.
         */
        SortedMap<Integer, String> issueStates(String repo);

        /** Hands issue states over to the server that will use this store, so it posts nothing again. */
        void handOver(String repo, SortedMap<Integer, String> states);

        /** Where the recovery pass stopped, as this store keeps it. */
        RecoveryPosition recovery();

        /** What its delivery queue holds: deliveries acknowledged and not done with, ids done with. */
        Acknowledged acknowledged();

        /** The name the server on this store goes by among replicas, if the store keeps one (a data dir). */
        Optional<String> replicaName();

        /**
         * Adds {@code deliveries} to its delivery queue, the waiting ones held by {@code holder}
         * where the store names who holds a delivery; ids it has already are left as they are. Leaves
         * nothing behind when it fails; returns what takes out again what it added.
         */
        Runnable carry(Acknowledged deliveries, String holder);

        /**
         * Removes what a copy wrote for {@code repo}, which held no ledger, status or event before
         * it: its ledgers, statuses and events, and the states of {@code issues} it was handed.
         */
        void forget(String repo, java.util.Set<Integer> issues);

        @Override
        void close();
    }

    /**
     * What each issue of a repository shows on GitHub as a data dir records it (the server keeps it
     * in its outbox, whose format the GitHub adapter owns), by issue number, as JSON.
     */
    @FunctionalInterface
    public interface IssueStates {
        SortedMap<Integer, String> of(String repo);

        IssueStates NONE = repo -> new TreeMap<>();
    }

    private final LockManager locks;
    private final Function<Path, IssueStates> dataDirStates;

    /** A copy that hands over no issue state from a data dir (only from a database). */
    public StoreCopy(LockManager locks) {
        this(locks, dir -> IssueStates.NONE);
    }

    /** {@code dataDirStates}: reads the issue states a data dir's server recorded (agentx store copy's own). */
    public StoreCopy(LockManager locks, Function<Path, IssueStates> dataDirStates) {
        this.locks = locks;
        this.dataDirStates = dataDirStates;
    }

    /**
     * Copies every repository of {@code from} (or only {@code only}, when given) to {@code to},
     * reporting each one to {@code progress} as it is done.
     *
     * @throws ClarifyException USAGE when the destination already holds state for a repository
     *                          copied, INTERNAL when the source cannot be read whole (nothing is
     *                          written then either), when writing fails or when a repository read
     *                          back differs from its source (what was written is removed again)
     */
    public Result copy(Location from, Location to, Optional<String> only, Consumer<Copied> progress) {
        return copy(from, to, only, () -> { }, progress);
    }

    /**
     * As {@link #copy(Location, Location, Optional, Consumer)}, running {@code checked} once every
     * check has passed (neither store in use, the destination empty for the repositories copied,
     * the source read whole), before anything is written: what is refused refuses before it.
     */
    public Result copy(Location from, Location to, Optional<String> only, Runnable checked,
                       Consumer<Copied> progress) {
        if (from.equals(to)) {
            throw new ClarifyException(ErrorCode.USAGE, "--from and --to are the same store: " + from);
        }
        try (Side source = open(from, PostgresDatabase.Schema.EXPECT_CURRENT);
                Side destination = open(to, PostgresDatabase.Schema.MIGRATE)) {
            List<String> repos = source.repositories();
            Acknowledged acknowledged = acknowledged(source, from);
            if (repos.isEmpty() && (only.isPresent() || acknowledged.waiting().isEmpty())) {
                throw new ClarifyException(ErrorCode.NOT_FOUND, from + " holds no repository state" + (from instanceof Files
                        ? " (a data folder keeps it under repos/OWNER/NAME/.agentx/state/)" : "") + "; nothing to copy.");
            }
            if (only.isPresent()) {
                // named as GitHub names repositories: in any case
                Optional<String> named = repos.stream().filter(r -> r.equalsIgnoreCase(only.get())).findFirst();
                if (named.isEmpty()) {
                    throw new ClarifyException(ErrorCode.NOT_FOUND, from + " holds nothing for " + only.get()
                            + (repos.isEmpty() ? "" : "; it holds " + String.join(", ", repos)) + ".");
                }
                repos = List.of(named.get());
            }
            List<String> occupied = new ArrayList<>();
            for (String repo : repos) {
                if (holdsAnything(destination.repository(repo))) {
                    occupied.add(repo);
                }
            }
            if (!occupied.isEmpty()) {
                throw new ClarifyException(ErrorCode.USAGE, to + " already holds state for " + String.join(", ", occupied)
                        + "; nothing was copied. Copy into an empty store (or pass --repo for the others).");
            }
            // every repository read and checked before anything is written
            Map<String, Tally> before = new java.util.LinkedHashMap<>();
            Map<String, SortedMap<Integer, String>> states = new java.util.LinkedHashMap<>();
            for (String repo : repos) {
                before.put(repo, tally(repo, source.repository(repo)));
                states.put(repo, source.issueStates(repo));
            }
            // the deliveries go with the repositories they are about; those about none go with any copy
            List<String> copying = repos;
            List<Acknowledged.Waiting> waiting = acknowledged.waiting().stream().filter(w -> only.isEmpty()
                    || aboutOneOf(w.key(), copying)).toList();
            Acknowledged selected = new Acknowledged(waiting, acknowledged.done());
            java.util.Set<String> there = acknowledged(destination, to).ids();
            Acknowledged carrying = selected.only(id -> !there.contains(id));
            int alreadyThere = selected.ids().size() - carrying.ids().size();
            int left = acknowledged.waiting().size() - waiting.size();
            DeliveryTally carryingTally = tally(carrying);
            checked.run();
            List<Copied> out = new ArrayList<>();
            List<String> differ = new ArrayList<>();
            Map<String, java.util.Set<Integer>> written = new java.util.LinkedHashMap<>();
            String current = null;
            try {
                for (String repo : repos) {
                    current = repo;
                    written.put(repo, states.get(repo).keySet());
                    RepositoryState dst = destination.repository(repo);
                    copy(source.repository(repo), dst);
                    destination.handOver(repo, states.get(repo));
                    Copied c = new Copied(repo, before.get(repo), tally(repo, dst), states.get(repo).size());
                    out.add(c);
                    progress.accept(c);
                    if (!c.same()) {
                        differ.add(repo);
                    }
                }
            } catch (RuntimeException e) {
                String undone = undo(destination, written, null);
                throw new ClarifyException(ErrorCode.INTERNAL, "copying " + current + " to " + to + " failed: "
                        + e.getMessage() + "; " + undone, e);
            }
            if (!differ.isEmpty()) {
                throw new ClarifyException(ErrorCode.INTERNAL, "the copy of " + String.join(", ", differ) + " in " + to
                        + " does not match its source (counts or checksum differ, above); the source is unchanged; "
                        + undo(destination, written, null));
            }
            Deliveries deliveries = carry(source, destination, to, carrying, carryingTally, alreadyThere, left, written);
            return new Result(out, deliveries, handOverRecovery(source, destination));
        }
    }

    /**
     * The name holding the deliveries carried into a database when the source names none: a
     * replica that never beats, whose deliveries the first replica to start takes up.
     */
    public static final String CARRIED_HOLDER = "agentx-store-copy";

    /**
     * Carries {@code carrying} (the source's deliveries the destination has not received) into the
     * destination's delivery queue and reads them back: when that fails or they differ, what the
     * carry and the copy wrote ({@code written}) is removed again.
     */
    private static Deliveries carry(Side source, Side destination, Location to, Acknowledged carrying,
                                    DeliveryTally carryingTally, int alreadyThere, int left,
                                    Map<String, java.util.Set<Integer>> written) {
        if (carrying.waiting().isEmpty() && carrying.done().isEmpty()) {
            return new Deliveries(carryingTally, carryingTally, alreadyThere, left);
        }
        Runnable uncarry = null;
        Deliveries carried;
        try {
            uncarry = destination.carry(carrying, source.replicaName().orElse(CARRIED_HOLDER));
            java.util.Set<String> ids = carrying.ids();
            carried = new Deliveries(carryingTally, tally(destination.acknowledged().only(ids::contains)), alreadyThere,
                    left);
        } catch (RuntimeException e) {
            throw new ClarifyException(ErrorCode.INTERNAL, "carrying the deliveries to " + to + " failed: "
                    + e.getMessage() + "; " + undo(destination, written, uncarry), e);
        }
        if (!carried.same()) {
            DeliveryTally s = carried.source();
            DeliveryTally d = carried.destination();
            throw new ClarifyException(ErrorCode.INTERNAL, "the deliveries carried to " + to + " do not match their "
                    + "source: " + s.waiting() + " waiting and " + s.done() + " done with, checksum " + s.checksum()
                    + ", read back as " + d.waiting() + " and " + d.done() + ", checksum " + d.checksum()
                    + "; the source is unchanged; " + undo(destination, written, uncarry));
        }
        return carried;
    }

    /**
     * Removes what the copy wrote ({@code written}, and the deliveries {@code uncarry} takes out
     * again, if any) from the destination, saying what came of it.
     */
    private static String undo(Side destination, Map<String, java.util.Set<Integer>> written, Runnable uncarry) {
        String deliveries = "";
        if (uncarry != null) {
            try {
                uncarry.run();
            } catch (RuntimeException e) {
                deliveries = "the deliveries it carried could not be taken out again (" + e.getMessage() + "); a "
                        + "copy run again leaves those there as they are. ";
            }
        }
        List<String> left = new ArrayList<>();
        for (Map.Entry<String, java.util.Set<Integer>> w : written.entrySet()) {
            try {
                destination.forget(w.getKey(), w.getValue());
            } catch (RuntimeException e) {
                left.add(w.getKey() + " (" + e.getMessage() + ")");
            }
        }
        return deliveries + (left.isEmpty() ? "what it wrote there was removed again, so the copy can be run again."
                : "what it wrote could not be removed for " + String.join(", ", left) + ": empty those "
                + "repositories' state there before copying again.");
    }

    /** What {@code side}'s delivery queue holds; INTERNAL, naming the store, when it cannot be read whole. */
    private static Acknowledged acknowledged(Side side, Location where) {
        try {
            return side.acknowledged();
        } catch (UncheckedIOException e) {
            throw new ClarifyException(ErrorCode.INTERNAL, "the deliveries of " + where + " cannot be read: "
                    + e.getMessage() + "; nothing was copied.", e);
        }
    }

    /** Whether a delivery with the order key {@code key} goes with a copy of {@code repos}: it is about one of them, or about none. */
    private static boolean aboutOneOf(String key, List<String> repos) {
        int hash = key.lastIndexOf('#');
        if (key.isEmpty() || hash < 0) {
            return true;
        }
        String repo = key.substring(0, hash);
        return repos.stream().anyMatch(repo::equalsIgnoreCase);
    }

    /**
     * Counts and a SHA-256 over deliveries in their order and ids in theirs: each delivery's id,
     * event, time received, order key, failed attempts, next try and body; each id with when it
     * was done with. Times to the microsecond, as a database keeps them.
     */
    static DeliveryTally tally(Acknowledged a) {
        MessageDigest sha = sha256();
        sha.update("waiting\n".getBytes(StandardCharsets.UTF_8));
        for (Acknowledged.Waiting w : a.waiting()) {
            sha.update((w.id() + "\n" + w.event() + "\n" + micros(w.receivedAt()) + "\n" + w.key() + "\n"
                    + w.attempts() + "\n" + micros(w.notBefore()) + "\n" + w.body().length + "\n")
                    .getBytes(StandardCharsets.UTF_8));
            sha.update(w.body());
        }
        sha.update("done\n".getBytes(StandardCharsets.UTF_8));
        a.done().forEach((id, at) -> sha.update((id + " " + micros(at) + "\n").getBytes(StandardCharsets.UTF_8)));
        return new DeliveryTally(a.waiting().size(), a.done().size(), HexFormat.of().formatHex(sha.digest())
                .substring(0, 16));
    }

    private static String micros(java.time.Instant at) {
        return at == null ? "-" : at.truncatedTo(java.time.temporal.ChronoUnit.MICROS).toString();
    }

    private static Recovery handOverRecovery(Side source, Side destination) {
        Optional<JsonNode> position;
        try {
            position = source.recovery().read();
        } catch (UncheckedIOException e) {
            return Recovery.UNREADABLE_AT_SOURCE;
        }
        if (position.isEmpty()) {
            return Recovery.NONE_AT_SOURCE;
        }
        if (destination.recovery().read().isPresent()) {
            return Recovery.DESTINATION_HOLDS_ONE;
        }
        destination.recovery().write(position.get());
        return Recovery.HANDED_OVER;
    }

    private static boolean holdsAnything(RepositoryState s) {
        return !s.ledgers().issues().isEmpty() || !s.statuses().read().isEmpty() || !s.events().all().events().isEmpty();
    }

    private static void copy(RepositoryState from, RepositoryState to) {
        for (int issue : from.ledgers().issues()) {
            Optional<Ledger> ledger = from.ledgers().read(issue);
            ledger.ifPresent(l -> to.ledgers().update(issue, "agentx-store-copy", current -> Mutation.write(l, null)));
        }
        Map<String, AgentStatus> statuses = from.statuses().read();
        if (!statuses.isEmpty()) {
            to.statuses().update("agentx-store-copy", current -> statuses);
        }
        EventLog.Read events = from.events().all();
        if (events.unreadableLines() > 0) {
            // checked before anything was written (tally): the source changed during the copy
            throw new IllegalStateException(events.unreadableLines() + " entries of the event log of "
                    + from.describe() + " cannot be read");
        }
        int batch = 1000;
        List<ClarificationEvent> all = events.events();
        for (int i = 0; i < all.size(); i += batch) {
            to.events().publish(all.subList(i, Math.min(all.size(), i + batch)));
        }
    }

    /**
     * Counts and a SHA-256 over the canonical documents of {@code repo}, in a fixed order; INTERNAL
     * if any of them cannot be read (an event log line that is not an event, a damaged ledger).
     */
    static Tally tally(String repo, RepositoryState s) {
        try {
            return tally(s);
        } catch (ClarifyException e) {
            throw new ClarifyException(e.code(), repo + " (" + s.describe() + "): " + e.getMessage()
                    + "; nothing was copied.", e);
        }
    }

    /** Counts and a SHA-256 over the canonical documents, in a fixed order. */
    static Tally tally(RepositoryState s) {
        MessageDigest sha = sha256();
        LedgerCodec ledgerCodec = new LedgerCodec();
        int ledgers = 0;
        int records = 0;
        for (int issue : s.ledgers().issues()) {
            Optional<Ledger> l = s.ledgers().read(issue);
            if (l.isPresent()) {
                ledgers++;
                records += l.get().clarifications().size();
                sha.update(("ledger " + issue + "\n").getBytes(StandardCharsets.UTF_8));
                sha.update(ledgerCodec.encode(l.get()));
            }
        }
        Map<String, AgentStatus> statuses = s.statuses().read();
        sha.update("statuses\n".getBytes(StandardCharsets.UTF_8));
        sha.update(new AgentStatusCodec().encode(statuses));
        EventLog.Read events = s.events().all();
        if (events.unreadableLines() > 0) {
            throw new ClarifyException(ErrorCode.INTERNAL, events.unreadableLines() + " entries of its event log "
                    + "cannot be read; fix or remove them before copying, so that nothing is lost quietly");
        }
        sha.update("events\n".getBytes(StandardCharsets.UTF_8));
        for (ClarificationEvent e : events.events()) {
            sha.update(JsonlEventLog.json(e));
            sha.update((byte) '\n');
        }
        return new Tally(ledgers, records, statuses.size(), events.events().size(),
                HexFormat.of().formatHex(sha.digest()).substring(0, 16));
    }

    /**
     * The sizes of the files of the inbox under {@code inbox} (carrying deliveries appends to its
     * journal and queue segments), so that {@link #restore} can take the appends back out.
     */
    private static Map<Path, Long> appendedFiles(Path inbox) {
        Map<Path, Long> out = new java.util.HashMap<>();
        try (java.util.stream.Stream<Path> files = java.nio.file.Files.walk(inbox)) {
            for (Path p : files.filter(java.nio.file.Files::isRegularFile).toList()) {
                out.put(p, java.nio.file.Files.size(p));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + inbox + ": " + e.getMessage(), e);
        }
        return out;
    }

    /**
     * Takes what was carried into the inbox {@code inbox} back out: the inbox removed if it was not
     * there before ({@code existed}), else each file cut back to its size in {@code sizes} (the
     * inbox's files are only ever appended to, or new) and the files made since removed.
     */
    private static void restore(Path inbox, boolean existed, Map<Path, Long> sizes) {
        try {
            if (!java.nio.file.Files.exists(inbox)) {
                return;
            }
            List<Path> files;
            try (java.util.stream.Stream<Path> walk = java.nio.file.Files.walk(inbox)) {
                files = walk.sorted(java.util.Comparator.reverseOrder()).toList(); // a folder after what it holds
            }
            for (Path p : files) {
                Long size = sizes.get(p);
                if (!existed) {
                    java.nio.file.Files.delete(p);
                } else if (java.nio.file.Files.isRegularFile(p) && size == null) {
                    java.nio.file.Files.delete(p);
                } else if (size != null && java.nio.file.Files.size(p) > size) {
                    try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(p,
                            java.nio.file.StandardOpenOption.WRITE)) {
                        ch.truncate(size);
                        ch.force(true);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot take the deliveries carried into " + inbox + " out again: "
                    + e.getMessage(), e);
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    /** One end of the copy; a database is migrated ({@code schema}) only as the destination. */
    private Side open(Location where, PostgresDatabase.Schema schema) {
        if (where instanceof Files f) {
            // held for the copy, as a server holds it; a folder that is not there yet has no server
            AutoCloseable held = java.nio.file.Files.isDirectory(f.dir()) ? DataDirectory.lockForCopy(f.dir()) : () -> { };
            DataDirectory dir = new DataDirectory(f.dir(), locks);
            Path inbox = f.dir().resolve("inbox");
            IssueStates[] states = new IssueStates[1]; // read on first use: only a source's are
            return new Side() {
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
                    if (states[0] == null) {
                        states[0] = dataDirStates.apply(f.dir());
                    }
                    return states[0].of(repo);
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
                    boolean existed = java.nio.file.Files.isDirectory(inbox);
                    // before opening it: what opening changes (a torn last record cut off, a segment of
                    // deliveries all done with deleted, a new one to append to) is what a server's start does
                    Map<Path, Long> sizes = existed ? appendedFiles(inbox) : Map.of();
                    FileDeliveryQueue queue = null;
                    try {
                        queue = new FileDeliveryQueue(inbox, Clock.systemUTC());
                        queue.carry(deliveries);
                    } catch (RuntimeException e) {
                        if (queue != null) {
                            queue.close();
                        }
                        try {
                            restore(inbox, existed, sizes);
                        } catch (RuntimeException suppressed) {
                            e.addSuppressed(suppressed);
                        }
                        throw e;
                    }
                    queue.close();
                    return () -> restore(inbox, existed, sizes);
                }

                @Override
                public void forget(String repo, java.util.Set<Integer> issues) {
                    Path state = dir.stateDirOf(repo);
                    List<Path> files = new ArrayList<>(List.of(state.resolve("agent-status.json"),
                            state.resolve("events.jsonl"), state.resolve("monitor-index.json")));
                    issues.forEach(issue -> files.add(state.resolve("github").resolve("issue-" + issue + ".json")));
                    try {
                        dir.repository(repo).ledgers().issues().forEach(issue -> files.add(
                                state.resolve("clarifications").resolve("issue-" + issue + ".json")));
                        for (Path file : files) {
                            java.nio.file.Files.deleteIfExists(file);
                        }
                    } catch (IOException e) {
                        throw new UncheckedIOException(e.getMessage(), e);
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
            };
        }
        PostgresDatabase db = PostgresDatabase.open(((Database) where).url(), 2, java.time.Duration.ZERO, schema);
        Map<String, Long> running;
        try {
            running = db.runningReplicas();
        } catch (RuntimeException e) {
            db.close();
            throw e;
        }
        if (!running.isEmpty()) {
            db.close();
            StringBuilder who = new StringBuilder();
            running.forEach((replica, age) -> who.append(who.isEmpty() ? "" : ", ").append(replica)
                    .append(" (its heartbeat ").append(age).append(" s old)"));
            throw new ClarifyException(ErrorCode.USAGE, where + " is in use by running agentx serve " + (running.size()
                    == 1 ? "replica " : "replicas ") + who + ": stop every server on it first, so that the copy is of "
                    + "a state that nothing changes meanwhile (a server killed without stopping counts as running for "
                    + PgDeliveryQueue.GONE_AFTER.toSeconds() + " s).");
        }
        PgNotes notes = db.notes(Clock.systemUTC());
        return new Side() {
            @Override
            public List<String> repositories() {
                return db.repositories();
            }

            @Override
            public RepositoryState repository(String repo) {
                return db.repository(repo);
            }

            @Override
            public SortedMap<Integer, String> issueStates(String repo) {
                return notes.issueNotes(repo);
            }

            @Override
            public void handOver(String repo, SortedMap<Integer, String> states) {
                states.forEach((issue, json) -> {
                    try {
                        notes.put(Notes.issueNote(repo, issue), JsonSupport.shared().readTree(json));
                    } catch (IOException e) {
                        throw new UncheckedIOException("the issue state " + issue + " of " + repo + " is not JSON: "
                                + e.getMessage(), e);
                    }
                });
            }

            @Override
            public RecoveryPosition recovery() {
                return RecoveryPosition.note(notes);
            }

            @Override
            public Acknowledged acknowledged() {
                return PgDeliveryQueue.acknowledged(db);
            }

            @Override
            public Optional<String> replicaName() {
                return Optional.empty();
            }

            @Override
            public Runnable carry(Acknowledged deliveries, String holder) {
                java.util.Set<String> added = PgDeliveryQueue.carry(db, deliveries, holder);
                return () -> PgDeliveryQueue.uncarry(db, added);
            }

            @Override
            public void forget(String repo, java.util.Set<Integer> issues) {
                db.forgetRepository(repo, issues.stream().map(issue -> Notes.issueNote(repo, issue)).toList());
            }

            @Override
            public void close() {
                db.close();
            }
        };
    }
}
