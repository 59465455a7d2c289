package dev.agentx.clarify.store;

import java.time.Instant;
import java.util.List;

/**
 * Which GitHub repositories the server keeps state of, under which names, and where it may post:
 * the repositories' and installations' records every replica shares. A repository's state is kept
 * by GitHub's id, which never changes; its record says the name it was last seen with (a rename or
 * a transfer changes the record, nothing else), the installation it was last seen through, and
 * whether posting there has stopped (archived, or taken out of the installation). An installation's
 * record says whether it is deleted or suspended. On files {@code repos/<id>/repository.json} and
 * {@code installations.json} in the data dir; on PostgreSQL the tables {@code repositories} and
 * {@code installations}.
 */
public interface RepositoryRecords {
    /**
     * A repository: GitHub's {@code id}; {@code owner}/{@code name} as last seen, since
     * {@code since}; the {@code installation} last seen acting on it (0: none yet);
     * {@code archived} and {@code removed} (from its installation): since when, or null.
     */
    record Repository(long id, String owner, String name, Instant since, long installation, Instant archived,
                      Instant removed) {
        public String fullName() {
            return owner + "/" + name;
        }

        /** The key of its state in the stores: the id in decimal. */
        public String stateKey() {
            return String.valueOf(id);
        }
    }

    /** An installation that may not be posted through: {@code state} is {@code deleted} or {@code suspended}, since {@code since}. */
    record Installation(long id, String state, Instant since) {
        public static final String DELETED = "deleted";
        public static final String SUSPENDED = "suspended";
    }

    /** Every repository recorded, in no particular order. */
    List<Repository> repositories();

    /** Records {@code r}, in place of the record of its id. */
    void put(Repository r);

    /** The installations recorded as deleted or suspended. */
    List<Installation> installations();

    /** Records {@code i} (deleted or suspended), in place of its record. */
    void put(Installation i);

    /** Forgets the record of installation {@code id}: it may be posted through again. */
    void forgetInstallation(long id);
}
