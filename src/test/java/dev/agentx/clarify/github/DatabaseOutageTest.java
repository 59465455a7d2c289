package dev.agentx.clarify.github;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.support.MutableClock;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * GitHub Mode on PostgreSQL while the database goes away and comes back: webhooks are still
 * acknowledged (the delivery is durable in the data dir's inbox), readiness fails and says why,
 * and once the database is back every delivery is carried out exactly once.
 */
class DatabaseOutageTest {
    @TempDir
    Path dir;
    private EmbeddedPostgres pg;
    private GitHubRig rig;

    private EmbeddedPostgres startDatabase(int port) throws Exception {
        return EmbeddedPostgres.builder().setDataDirectory(dir.resolve("pgdata")).setCleanDataDirectory(false)
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

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Test
    void deliveriesWaitOutAnOutageAndRunOnceWhenTheDatabaseIsBack() throws Exception {
        int port = freePort();
        pg = startDatabase(port);
        MutableClock clock = MutableClock.at("2026-11-25T09:00:00Z");
        rig = new GitHubRig(dir.resolve("data"), clock).database("postgresql://postgres@localhost:" + port + "/postgres");
        rig.start();
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which DB?")).status());
        assertEquals(Status.PENDING, rig.ledger(1).clarifications().get(0).status());
        assertEquals(200, rig.management("/readyz").status());
        int commentsBefore = rig.comments(1).size();

        pg.close();
        pg = null;
        assertEquals(202, rig.deliver("issue_comment", rig.comment("arch", 1, "/clarify answer Postgres.")).status());
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify followup CLR-1-001 Which "
                + "version?")).status());
        GitHubRig.Response ready = rig.management("/readyz");
        assertEquals(503, ready.status(), ready.body());
        assertTrue(ready.body().contains("cannot be reached"), ready.body());
        assertEquals(2, rig.mode().pendingDeliveries(), "both wait in the inbox");
        assertEquals(commentsBefore, rig.comments(1).size(), "nothing posted for them");

        pg = startDatabase(port);
        for (int i = 0; i < 4 && rig.mode().pendingDeliveries() > 0; i++) {
            clock.advance(Duration.ofMinutes(2)); // past the retry's backoff
            rig.mode().drain();
        }
        assertEquals(0, rig.mode().pendingDeliveries());
        assertEquals(200, rig.management("/readyz").status());
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
