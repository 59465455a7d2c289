package dev.agentx.clarify.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.ledger.LedgerCodec;
import dev.agentx.clarify.ledger.LedgerStore;
import dev.agentx.clarify.ledger.LedgerStore.Mutation;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.support.TestPostgres;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A replica that stops inside a transaction (a paused VM, SIGSTOP) holding an issue's lock does
 * not hold the other replicas up until their lock waits give up: PostgreSQL ends its session
 * after {@link PostgresDatabase#IDLE_IN_TRANSACTION_TIMEOUT}, which frees the lock, and when it
 * resumes nothing of its transaction has counted. This waits for that timeout, PostgreSQL's own
 * (10 s), as it is: a writer still waiting at {@link PostgresDatabase#LOCK_TIMEOUT} (15 s)
 * would fail this test with LOCK_TIMEOUT.
 */
@Tag("postgres")
class PausedTransactionTest {
    private static final String LEDGER = "{\"issueNumber\":7,\"clarifications\":[{\"id\":\"CLR-7-001\",\"from\":"
            + "\"engineer\",\"to\":\"architect\",\"topic\":\"%s\",\"blocking\":true,\"status\":\"pending\",\"round\":1,"
            + "\"maxRounds\":5,\"created\":\"2026-11-26T08:00:00Z\",\"staleAfter\":\"2026-11-26T08:30:00Z\",\"thread\":[{"
            + "\"round\":1,\"from\":\"engineer\",\"type\":\"question\",\"body\":\"Q?\",\"timestamp\":\"2026-11-26T08:00:00Z\"}]}]}";

    private static Ledger ledger(String topic) {
        return new LedgerCodec().decode(LEDGER.formatted(topic).getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void aWriterPausedInItsTransactionIsEndedAndTheIssueLockFreedForTheOthers() throws Exception {
        TestPostgres.Database database = TestPostgres.newDatabase();
        try (PostgresDatabase a = database.open(2); PostgresDatabase b = database.open(2)) {
            LedgerStore onA = a.repository("acme/shop").ledgers();
            LedgerStore onB = b.repository("acme/shop").ledgers();
            CountDownLatch paused = new CountDownLatch(1);
            CountDownLatch resume = new CountDownLatch(1);
            CompletableFuture<Object> writerA = CompletableFuture.supplyAsync(() -> {
                try {
                    return onA.update(7, "engineer", current -> {
                        paused.countDown(); // the issue is locked and read: A stops here
                        awaitQuietly(resume);
                        return Mutation.write(ledger("from the paused replica"), "written");
                    });
                } catch (RuntimeException e) {
                    return e;
                }
            });
            assertTrue(paused.await(30, TimeUnit.SECONDS), "replica A holds the issue's lock");

            // replica B writes the same issue: it gets the lock once A's session is ended
            assertEquals("written", onB.update(7, "architect", current ->
                    Mutation.write(ledger("from the running replica"), "written")));

            resume.countDown();
            ClarifyException ended = assertInstanceOf(ClarifyException.class, writerA.get(60, TimeUnit.SECONDS),
                    "A finds its connection ended when it resumes: its write did not commit");
            assertEquals(ErrorCode.UNAVAILABLE, ended.code(), ended.getMessage());
            assertEquals("from the running replica", onA.read(7).orElseThrow().clarifications().get(0).topic());
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
