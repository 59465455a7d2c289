package dev.agentx.clarify.github;

import dev.agentx.clarify.github.outbox.Destinations;
import dev.agentx.clarify.store.RepositoryRecords;
import dev.agentx.clarify.store.RepositoryRecords.Installation;
import dev.agentx.clarify.store.RepositoryRecords.Repository;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The repositories the server serves, by GitHub's id, which a rename or a transfer does not
 * change: their state is kept by id ({@link RepoRef#stateKey}), and this says which name each id
 * was last seen with and whether the server may post there. A delivery names its repository by id
 * and name ({@link #seen}): a name newer than the one recorded (the delivery was received after
 * the record's) is the repository's name from then on, whether a {@code repository.renamed} or
 * {@code transferred} event brought it or any other delivery; a new id under a name another id
 * had is a repository of its own, with state of its own. Names are looked up in any case ({@link
 * #byName}: the id that took the name last). The outbox asks where an effect goes now ({@link
 * #of}): the current name and installation of its repository, or that it waits (an installation
 * deleted or suspended, a repository archived or taken out of its installation).
 *
 * <p>The records live in the store ({@link RepositoryRecords}); this keeps them in memory, and on
 * a store shared by replicas reads them again when they are older than {@link #REFRESH}, so
 * another replica's change is followed within that time (a delivery's own id and name always are).
 */
public final class RepositoryNames implements Destinations {
    private static final Logger LOG = LoggerFactory.getLogger(RepositoryNames.class);
    /** How old the records kept in memory may get on a store that replicas share. */
    public static final Duration REFRESH = Duration.ofSeconds(10);
    private final RepositoryRecords records;
    private final Clock clock;
    private final boolean shared;
    private final Map<Long, Repository> repositories = new ConcurrentHashMap<>();
    private final Map<Long, Installation> installations = new ConcurrentHashMap<>();
    private volatile Instant loaded;

    /** {@code shared}: other replicas change the records too (PostgreSQL). */
    public RepositoryNames(RepositoryRecords records, Clock clock, boolean shared) {
        this.records = records;
        this.clock = clock;
        this.shared = shared;
        load();
    }

    private synchronized void load() {
        Map<Long, Repository> r = new java.util.HashMap<>();
        records.repositories().forEach(x -> r.put(x.id(), x));
        Map<Long, Installation> i = new java.util.HashMap<>();
        records.installations().forEach(x -> i.put(x.id(), x));
        repositories.keySet().retainAll(r.keySet());
        repositories.putAll(r);
        installations.keySet().retainAll(i.keySet());
        installations.putAll(i);
        loaded = clock.instant();
    }

    private void fresh() {
        if (shared && clock.instant().isAfter(loaded.plus(REFRESH))) {
            load();
        }
    }

    /**
     * The repository a delivery received at {@code receivedAt} names, {@code ref} with its id, as
     * installation {@code installation} (0: none given): recorded when new; its name recorded when
     * newer than the one recorded (logged as a rename or transfer), its installation when another.
     */
    public synchronized RepoRef seen(RepoRef ref, long installation, Instant receivedAt) {
        long id = ref.id();
        if (id <= 0) {
            throw new IllegalArgumentException("repository " + ref + " has no GitHub id");
        }
        Repository known = repositories.get(id);
        if (known == null) {
            put(new Repository(id, ref.owner(), ref.name(), receivedAt, installation, null, null));
            LOG.info("repository {} (id {}): first seen; its state is kept under its id", ref, id);
            return ref;
        }
        Repository now = known;
        if (!known.fullName().equals(ref.fullName()) && !receivedAt.isBefore(known.since())) {
            LOG.info("repository id {} was {} and is now {}: its threads and clarification ids go on under the new "
                    + "name", id, known.fullName(), ref.fullName());
            now = new Repository(id, ref.owner(), ref.name(), receivedAt, now.installation(), now.archived(),
                    now.removed());
        }
        if (installation > 0 && installation != now.installation() && !deleted(installation)) {
            now = new Repository(id, now.owner(), now.name(), now.since(), installation, now.archived(), now.removed());
        }
        if (now != known) {
            put(now);
        }
        return new RepoRef(now.owner(), now.name(), id);
    }

    /**
     * The repository with the name {@code fullName} now (in any case): the id that took the name
     * last. A name not known here is looked up in the store once more (a record written by another
     * process: {@code agentx sync --write}, a store copy).
     */
    public Optional<RepoRef> byName(String fullName) {
        fresh();
        Optional<RepoRef> found = named(fullName);
        if (found.isEmpty()) {
            load();
            found = named(fullName);
        }
        return found;
    }

    private Optional<RepoRef> named(String fullName) {
        return repositories.values().stream().filter(r -> r.fullName().equalsIgnoreCase(fullName))
                .max(Comparator.comparing(Repository::since))
                .map(r -> new RepoRef(r.owner(), r.name(), r.id()));
    }

    /** {@code ref} by its current name when its id is recorded, else as given. */
    public RepoRef current(RepoRef ref) {
        if (ref.id() <= 0) {
            return byName(ref.fullName()).orElse(ref);
        }
        fresh();
        Repository r = repositories.get(ref.id());
        return r == null ? ref : new RepoRef(r.owner(), r.name(), r.id());
    }

    /** The record of the repository with id {@code id}. */
    public Optional<Repository> record(long id) {
        fresh();
        return Optional.ofNullable(repositories.get(id));
    }

    /** Every repository recorded, by current name, as the store has them now (read again: pages list them). */
    public List<Repository> all() {
        load();
        return repositories.values().stream().sorted(Comparator.comparing(Repository::fullName)).toList();
    }

    @Override
    public Destination of(long installation, RepoRef repo) {
        if (repo.id() <= 0) {
            return new To(installation, repo);
        }
        fresh();
        Repository r = repositories.get(repo.id());
        if (r == null) {
            return new To(installation, repo);
        }
        long through = r.installation() > 0 ? r.installation() : installation;
        Installation gone = installations.get(through);
        if (gone != null) {
            return new Held("installation " + through + " is " + gone.state(), gone.since());
        }
        if (r.archived() != null) {
            return new Held("repository " + r.fullName() + " is archived", r.archived());
        }
        if (r.removed() != null) {
            return new Held("repository " + r.fullName() + " was taken out of installation " + through, r.removed());
        }
        return new To(through, new RepoRef(r.owner(), r.name(), r.id()));
    }

    /** Whether {@code repo} may be posted to now (logged by the caller when not). */
    public boolean posting(RepoRef repo) {
        return of(0, repo) instanceof To;
    }

    /** Repository {@code ref} was archived ({@code archived} true) or unarchived at {@code at}. */
    public synchronized void archived(RepoRef ref, long installation, boolean archived, Instant at) {
        Repository r = repositories.get(seen(ref, installation, at).id());
        put(new Repository(r.id(), r.owner(), r.name(), r.since(), r.installation(), archived ? at : null,
                r.removed()));
    }

    /**
     * Repository {@code ref} was taken out of installation {@code installation} ({@code removed}
     * true) or added to it, at {@code at}.
     */
    public synchronized void removed(RepoRef ref, long installation, boolean removed, Instant at) {
        Repository r = repositories.get(seen(ref, removed ? 0 : installation, at).id());
        put(new Repository(r.id(), r.owner(), r.name(), r.since(), removed ? r.installation() : installation,
                r.archived(), removed ? at : null));
    }

    /** Installation {@code id} was deleted or suspended ({@link Installation#DELETED}, {@link Installation#SUSPENDED}) at {@code at}. */
    public synchronized void installationGone(long id, String state, Instant at) {
        Installation i = new Installation(id, state, at);
        records.put(i);
        installations.put(id, i);
    }

    /** Installation {@code id} may be posted through again (unsuspended, or created). */
    public synchronized void installationBack(long id) {
        records.forgetInstallation(id);
        installations.remove(id);
    }

    private boolean deleted(long installation) {
        Installation i = installations.get(installation);
        return i != null && Installation.DELETED.equals(i.state());
    }

    private void put(Repository r) {
        records.put(r);
        repositories.put(r.id(), r);
    }
}
