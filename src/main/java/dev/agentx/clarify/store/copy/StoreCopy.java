package dev.agentx.clarify.store.copy;

import dev.agentx.clarify.events.ClarificationEvent;
import dev.agentx.clarify.events.EventLog;
import dev.agentx.clarify.ledger.LedgerStore.Mutation;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.status.AgentStatus;
import dev.agentx.clarify.store.Acknowledged;
import dev.agentx.clarify.store.RepositoryRecords;
import dev.agentx.clarify.store.RepositoryState;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * {@code agentx store copy}: every repository's ledgers, agent statuses and events from one store
 * to another (a data folder to PostgreSQL, or back). The destination must hold nothing for the
 * repositories copied, so that a copy never merges two histories. Every repository of the source is
 * read and checked before anything is written, so a source that cannot be copied whole (an event
 * log line that cannot be read, a damaged ledger) writes nothing. Each side is then counted and
 * checksummed from what it holds ({@link Tally}; the destination read back after the copy), so a
 * copy that lost or changed anything is reported as failed. A copy that fails while writing (the
 * database gone, a full disk) or does not match removes what it wrote from the destination again
 * ({@link Written}), so it can simply be run again.
 *
 * <p>Each issue's GitHub state (what the server posted on it) is handed over with its repository,
 * with the notes the server keeps of it that the caller names (the merge gate's record of pull
 * requests; read back and compared as JSON), and so is the recovery pass's position ({@link
 * Recovery}). The webhook deliveries the server
 * acknowledged and has not done with go too, with the ids of those it did with lately ({@link
 * DeliveryCarry}), after the repositories, counted and checksummed the same way. Each end is a
 * {@link Side}: a data folder ({@link DataDirSide}) or a database ({@link DatabaseSide}).
 */
public final class StoreCopy {
    /**
     * One repository copied ({@code repo}: its name as last seen): the source's tally and the destination's, read back, how many
     * issues' GitHub states (what the server posted on each) were handed over with it, and its notes.
     */
    public record Copied(String repo, Tally source, Tally destination, int issueStates, Notes notes) {
        public boolean same() {
            return source.equals(destination) && notes.same();
        }
    }

    /**
     * The notes handed over with a repository (the merge gate's record of pull requests): how
     * many the source holds, and whether the destination's read back as the same values.
     */
    public record Notes(int count, boolean same) {
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

    private final LockManager locks;
    private final Function<Path, IssueStates> dataDirStates;
    private final Function<String, List<String>> carriedNotes;

    /** A copy that hands over no issue state from a data dir (only from a database), and no note. */
    public StoreCopy(LockManager locks) {
        this(locks, dir -> IssueStates.NONE, repo -> List.of());
    }

    /**
     * {@code dataDirStates}: reads the issue states a data dir's server recorded; {@code
     * carriedNotes}: the beginnings of the names of the notes the server keeps of a repository
     * (by its key) that go with it (agentx store copy's own: the merge gate's).
     */
    public StoreCopy(LockManager locks, Function<Path, IssueStates> dataDirStates,
                     Function<String, List<String>> carriedNotes) {
        this.locks = locks;
        this.dataDirStates = dataDirStates;
        this.carriedNotes = carriedNotes;
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
        try (Side source = Side.open(from, PostgresDatabase.Schema.EXPECT_CURRENT, locks, dataDirStates);
                Side destination = Side.open(to, PostgresDatabase.Schema.MIGRATE, locks, dataDirStates)) {
            List<String> held = source.repositories();
            Acknowledged acknowledged = DeliveryCarry.read(source, from);
            Map<String, RepositoryRecords.Repository> records = new java.util.HashMap<>();
            source.records().repositories().forEach(r -> records.put(r.stateKey(), r));
            List<String> repos = chosen(held, records, from, only, acknowledged);
            // each shown by the name it was last seen with; its state is kept by GitHub's id of it
            java.util.function.Function<String, String> shown = r -> records.containsKey(r)
                    ? records.get(r).fullName() : "id " + r;
            refuseOccupied(destination, to, repos, shown);
            // every repository read and checked before anything is written
            Map<String, Tally> before = new LinkedHashMap<>();
            Map<String, SortedMap<Integer, String>> states = new LinkedHashMap<>();
            Map<String, SortedMap<String, String>> notes = new LinkedHashMap<>();
            for (String repo : repos) {
                before.put(repo, Tally.of(shown.apply(repo), source.repository(repo)));
                states.put(repo, source.issueStates(repo));
                notes.put(repo, source.notes(repo, carriedNotes.apply(repo)));
            }
            // a delivery's order key names its repository by id, as the state is kept
            DeliveryCarry deliveries = DeliveryCarry.choose(acknowledged, destination, to, only, repos);
            checked.run();
            List<Copied> out = new ArrayList<>();
            List<String> differ = new ArrayList<>();
            Written written = new Written(destination);
            String current = null;
            try {
                for (String repo : repos) {
                    String name = shown.apply(repo);
                    current = name;
                    written.add(repo, states.get(repo).keySet(), notes.get(repo).keySet());
                    RepositoryState dst = destination.repository(repo);
                    copy(source.repository(repo), dst);
                    destination.handOver(repo, states.get(repo));
                    destination.handOverNotes(repo, notes.get(repo));
                    Notes noted = new Notes(notes.get(repo).size(), sameJson(notes.get(repo),
                            destination.notes(repo, carriedNotes.apply(repo))));
                    Copied c = new Copied(name, before.get(repo), Tally.of(name, dst), states.get(repo).size(), noted);
                    out.add(c);
                    progress.accept(c);
                    if (!c.same()) {
                        differ.add(name);
                    }
                }
                // which repository each key is, under which name, and the installations not to post
                // through: once all of them are there
                if (!carryRecords(source.records(), destination.records(), repos, records, only.isEmpty())) {
                    differ.add("the repositories' and installations' records");
                }
            } catch (RuntimeException e) {
                String undone = written.remove(null);
                throw new ClarifyException(ErrorCode.INTERNAL, "copying " + current + " to " + to + " failed: "
                        + e.getMessage() + "; " + undone, e);
            }
            if (!differ.isEmpty()) {
                throw new ClarifyException(ErrorCode.INTERNAL, "the copy of " + String.join(", ", differ) + " in " + to
                        + " does not match its source (counts or checksum differ, above); the source is unchanged; "
                        + written.remove(null));
            }
            Deliveries carried = deliveries.carry(source, destination, to, written);
            return new Result(out, carried, Recovery.handOver(source, destination));
        }
    }

    /**
     * Writes the records of the repositories copied ({@code repos}, with {@code records} the
     * source's) and of the installations recorded deleted or suspended to the destination's
     * records ({@code repository.json} of each, {@code installations.json}; the tables
     * {@code repositories} and {@code installations}): every installation on a whole copy, those
     * the repositories copied were last seen through with {@code --repo}. False when they do not
     * read back as written.
     */
    private static boolean carryRecords(RepositoryRecords from, RepositoryRecords to, List<String> repos,
                                        Map<String, RepositoryRecords.Repository> records, boolean whole) {
        List<RepositoryRecords.Repository> repositories = repos.stream().filter(records::containsKey)
                .map(records::get).toList();
        java.util.Set<Long> through = new java.util.HashSet<>();
        repositories.forEach(r -> through.add(r.installation()));
        List<RepositoryRecords.Installation> installations = from.installations().stream()
                .filter(i -> whole || through.contains(i.id())).toList();
        repositories.forEach(to::put);
        installations.forEach(to::put);
        // compared to the microsecond, as PostgreSQL keeps times
        java.util.Set<RepositoryRecords.Repository> reposThere = new java.util.HashSet<>();
        to.repositories().forEach(r -> reposThere.add(micros(r)));
        java.util.Set<RepositoryRecords.Installation> installationsThere = new java.util.HashSet<>();
        to.installations().forEach(i -> installationsThere.add(micros(i)));
        return repositories.stream().map(StoreCopy::micros).allMatch(reposThere::contains)
                && installations.stream().map(StoreCopy::micros).allMatch(installationsThere::contains);
    }

    private static RepositoryRecords.Repository micros(RepositoryRecords.Repository r) {
        return new RepositoryRecords.Repository(r.id(), r.owner(), r.name(), micros(r.since()), r.installation(),
                micros(r.archived()), micros(r.removed()));
    }

    private static RepositoryRecords.Installation micros(RepositoryRecords.Installation i) {
        return new RepositoryRecords.Installation(i.id(), i.state(), micros(i.since()));
    }

    private static java.time.Instant micros(java.time.Instant t) {
        return t == null ? null : t.truncatedTo(java.time.temporal.ChronoUnit.MICROS);
    }

    /**
     * The repositories to copy of those the source holds ({@code repos}, their keys): all of
     * them, or the one named {@code only} now (in any case, as GitHub names repositories; {@code
     * records} says which name each key was last seen with); NOT_FOUND when there is nothing to
     * copy (a source with no repository but waiting deliveries has those to copy).
     */
    private static List<String> chosen(List<String> repos, Map<String, RepositoryRecords.Repository> records,
                                       Location from, Optional<String> only, Acknowledged acknowledged) {
        if (repos.isEmpty() && (only.isPresent() || acknowledged.waiting().isEmpty())) {
            throw new ClarifyException(ErrorCode.NOT_FOUND, from + " holds no repository state" + (from
                    instanceof Location.Files ? " (a data folder keeps it under repos/<id>/.agentx/state/)" : "")
                    + "; nothing to copy.");
        }
        if (only.isEmpty()) {
            return repos;
        }
        Optional<String> named = repos.stream().filter(r -> records.containsKey(r)
                && records.get(r).fullName().equalsIgnoreCase(only.get()))
                .max(java.util.Comparator.comparing(r -> records.get(r).since()));
        if (named.isEmpty()) {
            List<String> names = repos.stream().map(r -> records.containsKey(r) ? records.get(r).fullName()
                    : "id " + r).toList();
            throw new ClarifyException(ErrorCode.NOT_FOUND, from + " holds nothing for " + only.get()
                    + (names.isEmpty() ? "" : "; it holds " + String.join(", ", names)) + ".");
        }
        return List.of(named.get());
    }

    /** USAGE when the destination holds a ledger, a status or an event of a repository to copy. */
    private static void refuseOccupied(Side destination, Location to, List<String> repos,
                                       java.util.function.Function<String, String> shown) {
        List<String> occupied = new ArrayList<>();
        for (String repo : repos) {
            RepositoryState s = destination.repository(repo);
            if (!s.ledgers().issues().isEmpty() || !s.statuses().read().isEmpty()
                    || !s.events().all().events().isEmpty()) {
                occupied.add(shown.apply(repo));
            }
        }
        if (!occupied.isEmpty()) {
            throw new ClarifyException(ErrorCode.USAGE, to + " already holds state for " + String.join(", ", occupied)
                    + "; nothing was copied. Copy into an empty store (or pass --repo for the others).");
        }
    }

    /** Whether the notes {@code there} are those {@code here}, by name, as JSON values (not as text: key order, spacing). */
    private static boolean sameJson(SortedMap<String, String> here, SortedMap<String, String> there) {
        if (!here.keySet().equals(there.keySet())) {
            return false;
        }
        try {
            for (Map.Entry<String, String> n : here.entrySet()) {
                if (!dev.agentx.clarify.files.JsonSupport.shared().readTree(n.getValue())
                        .equals(dev.agentx.clarify.files.JsonSupport.shared().readTree(there.get(n.getKey())))) {
                    return false;
                }
            }
        } catch (java.io.IOException e) {
            return false;
        }
        return true;
    }

    /** One repository's ledgers, statuses and events, written to {@code to} as {@code from} holds them. */
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
            // checked before anything was written (Tally): the source changed during the copy
            throw new IllegalStateException(events.unreadableLines() + " entries of the event log of "
                    + from.describe() + " cannot be read");
        }
        int batch = 1000;
        List<ClarificationEvent> all = events.events();
        for (int i = 0; i < all.size(); i += batch) {
            to.events().publish(all.subList(i, Math.min(all.size(), i + batch)));
        }
    }
}
