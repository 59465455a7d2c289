package dev.agentx.clarify.github.mcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.github.GitHubMode;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestPostgres;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two replicas on one PostgreSQL database: a call waiting on one replica ends when the answer is
 * processed by the other (the ledger row's notification at its commit), not when a timer looks.
 */
@Tag("postgres")
class RemoteMcpReplicasTest {
    @TempDir
    Path dir;
    private GitHubRig rig;
    private McpSyncClient client;

    @AfterEach
    void stop() {
        if (client != null) {
            client.closeGracefully();
        }
        if (rig != null) {
            rig.close();
        }
    }

    @Test
    void aWaitOnOneReplicaEndsWhenTheOtherProcessesTheAnswer() throws Exception {
        TestPostgres.Database db = TestPostgres.newDatabase();
        rig = new GitHubRig(dir.resolve("data"), MutableClock.at(Instant.now().toString())).database(db.url());
        McpRig.stub(rig);
        McpRig.user(rig, "gho_eng", "eng");
        GitHubMode one = rig.start();
        GitHubMode other = rig.startReplica(dir.resolve("data-other"));
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect First?")).status());

        client = McpRig.client(one, "gho_eng");
        CompletableFuture<McpSchema.CallToolResult> asking = CompletableFuture.supplyAsync(() -> McpRig.call(client,
                "clarify_ask", Map.of("repository", GitHubRig.REPO.fullName(), "issue", 7, "to", "architect",
                        "question", "Which queue?", "wait_seconds", 3000)));
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!rig.hasLedger(7) && System.nanoTime() < until) {
            Thread.sleep(20);
        }
        assertTrue(rig.hasLedger(7), "asked");
        assertFalse(asking.isDone(), "it waits");
        // the answer arrives as a comment at the other replica, which processes it
        assertEquals(202, rig.deliverTo(other, "issue_comment", rig.comment("arch", 7,
                "/clarify answer CLR-7-001 The durable one."), "answer-7").status());
        McpSchema.CallToolResult r = asking.get(20, TimeUnit.SECONDS); // well within the 30 s look-again
        assertFalse(r.isError(), McpRig.text(r));
        assertTrue(McpRig.text(r).contains("The durable one."), McpRig.text(r));
    }
}
