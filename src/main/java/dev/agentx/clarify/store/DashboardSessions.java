package dev.agentx.clarify.store;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The dashboard's signed-in users, by session id (the random value its signed cookie carries). In
 * memory for a single server; on PostgreSQL a table, so that every replica behind a load balancer
 * knows a session whichever replica signed the user in, and sessions outlive restarts.
 */
public interface DashboardSessions {
    /** A signed-in user and what GitHub said they may read, until {@code expires}. */
    record Session(String login, Set<String> repositories, Instant expires) {
        public Session {
            repositories = Set.copyOf(repositories);
        }
    }

    /** Keeps a new session, and forgets those expired by {@code now}. */
    void put(String id, Session session, Instant now);

    /** The session with this id, if it is kept and not expired by {@code now}. */
    Optional<Session> get(String id, Instant now);

    /** Forgets the session with this id (its user signed out): the login it was, if one was kept. */
    Optional<String> remove(String id);

    /** Sessions in this process's memory: a restart signs everybody out. */
    static DashboardSessions inMemory() {
        Map<String, Session> sessions = new ConcurrentHashMap<>();
        return new DashboardSessions() {
            @Override
            public void put(String id, Session session, Instant now) {
                sessions.put(id, session);
                sessions.values().removeIf(s -> !s.expires().isAfter(now));
            }

            @Override
            public Optional<Session> get(String id, Instant now) {
                return Optional.ofNullable(sessions.get(id)).filter(s -> s.expires().isAfter(now));
            }

            @Override
            public Optional<String> remove(String id) {
                return Optional.ofNullable(sessions.remove(id)).map(Session::login);
            }
        };
    }
}
