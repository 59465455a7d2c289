package dev.agentx.clarify.github.mcp;

import dev.agentx.clarify.ledger.LedgerWatcher;
import dev.agentx.clarify.mcp.IssueChanges;
import dev.agentx.clarify.mcp.Waits;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Who waits for which repository's ledgers: an {@link IssueChanges} per repository (as the store
 * keys it), told of changes by the ledger folder's watcher on the file store (one watcher per
 * repository that has a waiting call, made with its first) or, on PostgreSQL, by the database's
 * notifications from every replica ({@link #changed}, {@link #all}).
 */
final class RepositoryChanges implements AutoCloseable {
    private final Map<String, IssueChanges> byRepository = new ConcurrentHashMap<>();
    private final Map<String, LedgerWatcher> watchers = new ConcurrentHashMap<>();
    /** The ledger folder of a repository on the file store; null on PostgreSQL. */
    private final Function<String, Path> ledgerFolder;

    /** Starts what tells of changes, once, at the first wait (a server nobody calls keeps no watch). */
    private final Runnable listen;
    private final java.util.concurrent.atomic.AtomicBoolean listening = new java.util.concurrent.atomic.AtomicBoolean();

    RepositoryChanges(Function<String, Path> ledgerFolder, Runnable listen) {
        this.ledgerFolder = ledgerFolder;
        this.listen = listen;
    }

    /** The waits of {@code repository}; on the file store its folder is watched from now on. */
    IssueChanges of(String repository) {
        if (listening.compareAndSet(false, true)) {
            listen.run();
        }
        IssueChanges changes = byRepository.computeIfAbsent(repository, r -> new IssueChanges());
        if (ledgerFolder != null) {
            watchers.computeIfAbsent(repository, r -> {
                LedgerWatcher w = new LedgerWatcher(ledgerFolder.apply(r), Waits.RECHECK);
                w.onChange(changes::changed);
                w.onOverflow(changes::all);
                return w;
            });
        }
        return changes;
    }

    /** The ledger of {@code repository}'s {@code issue} changed (a database notification). */
    void changed(String repository, int issue) {
        IssueChanges changes = byRepository.get(repository);
        if (changes != null) {
            changes.changed(issue);
        }
    }

    /** Any ledger may have changed: every waiting call looks again. */
    void all() {
        byRepository.values().forEach(IssueChanges::all);
    }

    /** The waiting calls of one share of the issues look again ({@link IssueChanges#some}). */
    void some(int part, int parts) {
        byRepository.values().forEach(c -> c.some(part, parts));
    }

    /** Waiting calls, in all. */
    int waiting() {
        return byRepository.values().stream().mapToInt(IssueChanges::size).sum();
    }

    @Override
    public void close() {
        watchers.values().forEach(LedgerWatcher::close);
    }
}
