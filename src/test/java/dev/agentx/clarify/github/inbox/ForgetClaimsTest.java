package dev.agentx.clarify.github.inbox;

import dev.agentx.clarify.github.outbox.Outbox;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.store.Replicas;
import dev.agentx.clarify.store.files.FileDeliveryQueue;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import dev.agentx.clarify.support.ForwardingReplicas;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestPostgres;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/** Replicas on one database forget old claims of effects one at a time, under a lease. */
@Tag("postgres")
class ForgetClaimsTest {
    @TempDir
    Path dir;

    private final MutableClock clock = MutableClock.at("2026-11-25T10:00:00Z");

    /** A replica that counts the times it forgot claims. */
    private static final class Counting extends ForwardingReplicas {
        final AtomicInteger forgot = new AtomicInteger();

        Counting(Replicas real) {
            super(real);
        }

        @Override
        public int forgetClaims(Instant before) {
            forgot.incrementAndGet();
            return real.forgetClaims(before);
        }
    }

    private Worker worker(String name, Counting replicas) {
        return new Worker(new FileDeliveryQueue(dir.resolve(name + "/inbox"), clock),
                TestProcessors.of((d, payload, progress, save) -> { }),
                new Outbox(dir.resolve(name + "/outbox"), null, clock, ServerMetrics.create(), replicas), clock, true,
                ServerMetrics.create(), replicas);
    }

    @Test
    void oneReplicaAtATimeForgetsOldClaimsAndAnotherTakesOverWhenItIsGone() {
        try (PostgresDatabase db = TestPostgres.newDatabase().open(4)) {
            Counting a = new Counting(db.replicas("replica-a", clock));
            Counting b = new Counting(db.replicas("replica-b", clock));
            java.time.Instant start = clock.instant();
            assertEquals(Replicas.Claim.MINE, a.claimEffect("old-effect", null, start, start).claim());
            try (Worker wa = worker("a", a); Worker wb = worker("b", b)) {
                clock.advance(Duration.ofDays(8));
                wa.drain();
                wb.drain();
                assertEquals(1, a.forgot.get());
                assertEquals(0, b.forgot.get(), "a holds the lease");
                java.time.Instant now = clock.instant();
                Replicas.EffectClaim anew = b.claimEffect("old-effect", null, now, now.minus(Duration.ofMinutes(10)));
                assertEquals(Replicas.Claim.MINE, anew.claim(), "forgotten, for both");
                assertFalse(anew.takenOver(), "claimed anew, not taken over from a");

                clock.advance(Duration.ofDays(1).plusMinutes(1));
                wb.drain();
                wa.drain();
                assertEquals(2, a.forgot.get(), "a renews its lease at each daily run");
                assertEquals(0, b.forgot.get());

                clock.advance(Duration.ofDays(2)); // a has stopped running: its lease lapses
                wb.drain();
                assertEquals(1, b.forgot.get(), "b took over");
            }
        }
    }
}
