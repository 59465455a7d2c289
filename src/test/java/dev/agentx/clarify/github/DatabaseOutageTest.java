package dev.agentx.clarify.github;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.support.FreePorts;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestPostgres;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * GitHub Mode on PostgreSQL while the database goes away and comes back: readiness fails and
 * says why, the dashboard answers 503 at once, deliveries are refused with 503 (nothing acknowledged that cannot be carried out; a
 * proxy would pass them to another replica, GitHub records a failure), and once the database is
 * back their redeliveries are carried out exactly once.
 */
@Tag("postgres")
class DatabaseOutageTest {
    @TempDir
    Path dir;
    private EmbeddedPostgres pg;
    private GitHubRig rig;

    private EmbeddedPostgres startDatabase(int port) throws Exception {
        return TestPostgres.builder().setDataDirectory(dir.resolve("pgdata")).setCleanDataDirectory(false)
                .setPort(port).start();
    }

    @AfterEach
    void close() throws Exception {
        if (rig != null) {
            rig.close();
        }
        if (pg != null) {
            pg.close();
        }
    }

    @Test
    void deliveriesAreRefusedDuringAnOutageAndTheirRedeliveriesRunOnceWhenTheDatabaseIsBack() throws Exception {
        int port = FreePorts.next();
        pg = startDatabase(port);
        MutableClock clock = MutableClock.at("2026-11-25T09:00:00Z");
        rig = new GitHubRig(dir.resolve("data"), clock).database("postgresql://postgres@localhost:" + port + "/postgres")
                .oauth("Iv1.abc123", "client-secret-1");
        rig.start();
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which DB?")).status());
        assertEquals(Status.PENDING, rig.ledger(1).clarifications().get(0).status());
        assertEquals(200, rig.management("/readyz").status());
        int commentsBefore = rig.comments(1).size();

        pg.close();
        pg = null;
        GitHubRig.Response ready = rig.management("/readyz"); // a check, as the server's own every second
        assertEquals(503, ready.status(), ready.body());
        assertTrue(ready.body().contains("cannot be reached"), ready.body());
        var answer = rig.comment("arch", 1, "/clarify answer Postgres.");
        var followup = rig.comment("eng", 1, "/clarify followup CLR-1-001 Which version?");
        GitHubRig.Response refused = rig.deliver("issue_comment", answer, "outage-1");
        assertEquals(503, refused.status(), refused.body());
        assertTrue(refused.body().contains("cannot be reached") && refused.body().contains("not acknowledged"),
                refused.body());
        assertEquals(503, rig.deliver("issue_comment", followup, "outage-2").status());
        assertEquals(0, rig.mode().pendingDeliveries(), "nothing acknowledged, nothing queued");
        long asked = System.nanoTime();
        GitHubRig.Response page = rig.request("GET", rig.mode().port(), "/dashboard", null, Map.of());
        assertEquals(503, page.status(), page.body());
        assertTrue(page.body().contains("cannot be reached"), page.body());
        assertTrue(System.nanoTime() - asked < java.util.concurrent.TimeUnit.SECONDS.toNanos(5),
                "at once, not after the pool's 10 s connection timeout");
        assertEquals(commentsBefore, rig.comments(1).size(), "nothing posted for them");

        pg = startDatabase(port);
        assertEquals(200, rig.management("/readyz").status());
        assertEquals(302, rig.request("GET", rig.mode().port(), "/dashboard", null, Map.of()).status(),
                "the dashboard is back: to GitHub's sign-in");
        // GitHub's redeliveries (the recovery pass asks for them): the same ids, now acknowledged
        assertEquals(202, rig.deliver("issue_comment", answer, "outage-1").status());
        assertEquals(202, rig.deliver("issue_comment", followup, "outage-2").status());
        assertEquals(200, rig.deliver("issue_comment", answer, "outage-1").status(), "a second copy: duplicate");
        // the pool's first connections may be ones the restart broke: a failed attempt is retried
        for (int i = 0; i < 4 && rig.mode().pendingDeliveries() > 0; i++) {
            clock.advance(Duration.ofMinutes(2)); // past the retry's backoff
            rig.mode().drain();
        }
        assertEquals(0, rig.mode().pendingDeliveries());
        ClarificationRecord r = rig.ledger(1).clarifications().get(0);
        assertEquals(Status.PENDING, r.status());
        assertEquals(2, r.round());
        assertEquals(List.of(EntryType.QUESTION, EntryType.ANSWER, EntryType.QUESTION),
                r.thread().stream().map(e -> e.type()).toList(), "each command carried out once");
        List<String> comments = rig.comments(1);
        assertEquals(1, comments.stream().filter(c -> c.contains("> Postgres.")).count(), comments.toString());
        assertEquals(1, comments.stream().filter(c -> c.contains("> Which version?")).count(), comments.toString());
    }
}
