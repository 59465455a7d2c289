package dev.agentx.clarify.store.copy;

import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.store.Acknowledged;
import dev.agentx.clarify.store.Notes;
import dev.agentx.clarify.store.RecoveryPosition;
import dev.agentx.clarify.store.RepositoryState;
import dev.agentx.clarify.store.postgres.PgDeliveryQueue;
import dev.agentx.clarify.store.postgres.PgNotes;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;

/**
 * A PostgreSQL database as one end of a copy, opened only while no server runs on it: its
 * repositories, the issue states and the recovery position in its shared notes, and its
 * delivery tables.
 */
final class DatabaseSide implements Side {
    private final PostgresDatabase db;
    private final PgNotes notes;

    private DatabaseSide(PostgresDatabase db) {
        this.db = db;
        this.notes = db.notes(Clock.systemUTC());
    }

    /** Opens the database; USAGE when a replica of {@code agentx serve} is running on it. */
    static DatabaseSide open(Location.Database where, PostgresDatabase.Schema schema) {
        PostgresDatabase db = PostgresDatabase.open(where.url(), 2, Duration.ZERO, schema);
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
        return new DatabaseSide(db);
    }

    @Override
    public dev.agentx.clarify.store.RepositoryRecords records() {
        return db.records();
    }

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
    public SortedMap<String, String> notes(String repo, List<String> prefixes) {
        SortedMap<String, String> out = new java.util.TreeMap<>();
        prefixes.forEach(prefix -> out.putAll(notes.startingWith(prefix)));
        return out;
    }

    @Override
    public void handOverNotes(String repo, SortedMap<String, String> handed) {
        handed.forEach((name, json) -> {
            try {
                notes.put(name, JsonSupport.shared().readTree(json));
            } catch (IOException e) {
                throw new UncheckedIOException("the note " + name + " of " + repo + " is not JSON: " + e.getMessage(), e);
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
        Set<String> added = PgDeliveryQueue.carry(db, deliveries, holder);
        return () -> PgDeliveryQueue.uncarry(db, added);
    }

    @Override
    public void forget(String repo, Set<Integer> issues, Set<String> handed) {
        List<String> names = new java.util.ArrayList<>(handed);
        issues.forEach(issue -> names.add(Notes.issueNote(repo, issue)));
        db.forgetRepository(repo, names);
    }

    @Override
    public void close() {
        db.close();
    }
}
