package dev.agentx.clarify.store.copy;

import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.store.Acknowledged;
import dev.agentx.clarify.store.RecoveryPosition;
import dev.agentx.clarify.store.RepositoryState;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.function.Function;

/**
 * One end of a copy, opened: its repositories and their state, what it keeps of GitHub and of
 * the deliveries it acknowledged, and how to remove what a copy wrote to it. A data folder is
 * {@link DataDirSide}, a database {@link DatabaseSide}.
 */
interface Side extends AutoCloseable {
    /**
     * Opens {@code where}; a database is migrated ({@code schema}) only as the destination. A store
     * a server is running on is refused (USAGE): the copy must be of a state nothing changes.
     *
     * @param dataDirStates reads the issue states a data dir's server recorded
     */
    static Side open(Location where, PostgresDatabase.Schema schema, LockManager locks,
                     Function<Path, IssueStates> dataDirStates) {
        if (where instanceof Location.Files f) {
            return DataDirSide.open(f.dir(), locks, dataDirStates);
        }
        return DatabaseSide.open((Location.Database) where, schema);
    }

    /** The keys (GitHub's ids) of the repositories it holds state of. */
    List<String> repositories();

    RepositoryState repository(String repo);

    /** Which repository each key is, under which name; where the server may post. */
    dev.agentx.clarify.store.RepositoryRecords records();

    /**
     * What the server put on GitHub for each issue of {@code repo} (the comments posted per
     * record, the labels set), as JSON by issue number: a database's shared notes, a data
     * dir's outbox records.
     */
    SortedMap<Integer, String> issueStates(String repo);

    /** Hands issue states over to the server that will use this store, so it posts nothing again. */
    void handOver(String repo, SortedMap<Integer, String> states);

    /**
     * The notes the server keeps of {@code repo} whose names start with one of {@code prefixes}
     * (the merge gate's record of pull requests), by name, each as its JSON text: a database's
     * shared notes, a data dir's outbox journal with what a copy handed over and no server took
     * in yet ({@link HandedOverNotes}).
     */
    SortedMap<String, String> notes(String repo, List<String> prefixes);

    /** Hands {@code notes} of {@code repo} over to the server that will use this store. */
    void handOverNotes(String repo, SortedMap<String, String> notes);

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
     * it: its ledgers, statuses and events, the states of {@code issues} and the {@code notes}
     * (by name) it was handed.
     */
    void forget(String repo, Set<Integer> issues, Set<String> notes);

    @Override
    void close();
}
