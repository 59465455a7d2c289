package dev.agentx.clarify.github.ops;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.github.inbox.Worker;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code GET /readyz} of the management port: ready when all of these hold.
 * <ul>
 *   <li>The webhook port takes connections: the management port starts first, and a load balancer
 *       that sent deliveries on its word before then would have them refused.</li>
 *   <li>The data dir is writable: a temp file is created there and deleted.</li>
 *   <li>The worker is alive (started, not closed) and not stuck: the delivery it has been on longest started less than
 *       {@link #STUCK_AFTER} ago.</li>
 *   <li>The inbox is being drained: the oldest delivery that is due (not waiting out a retry
 *       backoff) was received less than {@link #STUCK_AFTER} ago.</li>
 *   <li>The store answers: with {@code AGENTX_DATABASE_URL}, the database takes a query.</li>
 *   <li>The server is not shutting down.</li>
 * </ul>
 */
public final class Readiness {
    /** How long a due delivery may wait, or one drain may run, before the server reports not ready. */
    public static final Duration STUCK_AFTER = Duration.ofMinutes(5);

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path dataDir;
    private final Worker worker;
    private final Clock clock;
    private final java.util.function.Supplier<java.util.Optional<String>> store;
    private final java.util.function.BooleanSupplier listening;
    private volatile boolean stopping;

    /** The verdict; {@code reasons} is empty when ready. */
    public record Result(boolean ready, List<String> reasons) {
        public Result {
            reasons = List.copyOf(reasons);
        }
    }

    /**
     * @param listening whether the webhook port takes connections, asked on every check
     * @param store what is wrong with the store (empty: nothing), asked on every check
     */
    public Readiness(Path dataDir, Worker worker, Clock clock, java.util.function.BooleanSupplier listening,
            java.util.function.Supplier<java.util.Optional<String>> store) {
        this.listening = listening;
        this.store = store;
        this.dataDir = dataDir;
        this.worker = worker;
        this.clock = clock;
    }

    /** From now on, not ready: shutting down. */
    public void stopping() {
        stopping = true;
    }

    public Result check() {
        List<String> reasons = new ArrayList<>();
        if (stopping) {
            reasons.add("shutting down");
        } else if (!listening.getAsBoolean()) {
            reasons.add("the webhook port is not listening yet");
        }
        try {
            Path probe = Files.createTempFile(dataDir, ".readyz-", ".tmp");
            Files.delete(probe);
        } catch (IOException | UncheckedIOException | SecurityException e) {
            reasons.add("data dir " + dataDir + " is not writable: " + e.getMessage());
        }
        store.get().ifPresent(reasons::add);
        Instant now = clock.instant();
        Worker.Health health = worker.health();
        if (!health.alive()) {
            reasons.add("the inbox worker is not running");
        } else if (health.drainingSince() != null && health.drainingSince().plus(STUCK_AFTER).isBefore(now)) {
            reasons.add("the inbox worker has been busy with one delivery since " + health.drainingSince());
        }
        // a line waiting out a retry is held on purpose; the others are being worked through
        worker.oldestDue().filter(received -> received.plus(STUCK_AFTER).isBefore(now))
                .ifPresent(received -> reasons.add("the oldest due delivery has waited since " + received));
        return new Result(reasons.isEmpty(), reasons);
    }

    /** The answer's body: {@code {"status":"ready","reasons":[]}}, or "not ready" with the reasons. */
    public static String json(Result r) {
        ObjectNode body = JSON.createObjectNode();
        body.put("status", r.ready() ? "ready" : "not ready");
        r.reasons().forEach(body.putArray("reasons")::add);
        return body.toString();
    }
}
