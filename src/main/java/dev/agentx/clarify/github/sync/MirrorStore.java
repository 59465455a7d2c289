package dev.agentx.clarify.github.sync;

import dev.agentx.clarify.config.Labels;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.github.handlers.IssueMirror;
import dev.agentx.clarify.ledger.FileLedgerStore;
import dev.agentx.clarify.ledger.LedgerStore;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.store.Notes;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import dev.agentx.clarify.store.postgres.PostgresRepositoryState;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Optional;

/**
 * One repository's state where the server keeps it, as {@code agentx sync} compares and rebuilds
 * it: the ledgers, and what the server records as already posted on GitHub for each issue. The
 * file store keeps both under {@code $AGENTX_DATA_DIR/repos/<id>/.agentx/state/}; on
 * PostgreSQL ({@code AGENTX_DATABASE_URL}) they are the repository's ledger rows and the issues'
 * shared notes.
 */
public interface MirrorStore {
    /** The issues that have a ledger, ascending. */
    List<Integer> issues();

    Optional<Ledger> read(int issue);

    /**
     * Replaces the issue's ledger by {@code rebuilt} and records everything in it as posted on
     * GitHub by {@code installation}, so the server posts none of it again.
     */
    void replace(Ledger rebuilt, long installation);

    /** Where the state is, for the report: a folder, or a database. */
    String describe();

    /** {@code "agentx sync"}: the actor of the ledger writes. */
    String ACTOR = "agentx sync";

    /**
     * The file store of the data dir {@code dataDir}: the ledgers in
     * {@code repos/<id>/.agentx/state/clarifications/} under {@code locks}, each written
     * issue recorded as posted in {@code state/github/issue-N.json}, which the server prefers to
     * its outbox's note until it replaces it with a note at the issue's next change.
     *
     * @param labels the status label names the server sets, recorded as set for a rewritten issue
     */
    static MirrorStore files(Path dataDir, RepoRef repo, LockManager locks, Labels labels) {
        Path root = repo.rootIn(dataDir);
        Path state = root.resolve(".agentx").resolve("state");
        FileLedgerStore ledgers = new FileLedgerStore(state, locks);
        return new MirrorStore() {
            @Override
            public List<Integer> issues() {
                return ledgers.issues();
            }

            @Override
            public Optional<Ledger> read(int issue) {
                return ledgers.read(issue);
            }

            @Override
            public void replace(Ledger rebuilt, long installation) {
                ledgers.update(rebuilt.issueNumber(), ACTOR, l -> LedgerStore.Mutation.write(rebuilt, null));
                IssueMirror.recordMirrored(root, rebuilt, installation, labels);
            }

            @Override
            public String describe() {
                return "files under " + state;
            }
        };
    }

    /**
     * The repository {@code repo} (its rows keyed by its id) of the server's database {@code db}: each issue's ledger row and its shared note (what the server posted)
     * written in one transaction, under the issue's lock, as a delivery writes them. A state file
     * of the file store for that issue under {@code root} (the repository's folder in the data dir)
     * would outrank the note, so it is removed once the transaction committed.
     *
     * @param labels the status label names the server sets, recorded as set for a rewritten issue
     */
    static MirrorStore postgres(PostgresDatabase db, RepoRef ref, Path root, Labels labels, Clock clock) {
        String repo = ref.stateKey();
        PostgresRepositoryState state = db.repository(repo);
        Notes notes = db.notes(clock);
        return new MirrorStore() {
            @Override
            public List<Integer> issues() {
                return state.ledgers().issues();
            }

            @Override
            public Optional<Ledger> read(int issue) {
                return state.ledgers().read(issue);
            }

            @Override
            public void replace(Ledger rebuilt, long installation) {
                db.run(() -> {
                    state.ledgers().update(rebuilt.issueNumber(), ACTOR, l -> LedgerStore.Mutation.write(rebuilt,
                            null));
                    IssueMirror.recordMirrored(notes, repo, rebuilt, installation, labels);
                    return null;
                });
                IssueMirror.removeStateFile(root, rebuilt.issueNumber());
            }

            @Override
            public String describe() {
                return ref.fullName() + " in " + db.describe();
            }
        };
    }
}
