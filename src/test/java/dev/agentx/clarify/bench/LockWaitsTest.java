package dev.agentx.clarify.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The webhook bench's lock waits, read from PostgreSQL's log lines as the server writes them. */
class LockWaitsTest {
    @TempDir
    Path logs;

    @Test
    void countsTheWaitsThatEndedInTheSpanByLockAndWhatItLocks() throws Exception {
        Files.writeString(logs.resolve("postgresql-1.log"), String.join("\n",
                "2026-11-28 02:29:31.600 UTC:21128:LOG:  process 21128 still waiting for RowExclusiveLock on relation "
                        + "16521 of database 13695 after 6.410 ms",
                "2026-11-28 02:29:31.610 UTC:21128:LOG:  process 21128 acquired RowExclusiveLock on relation 16521 "
                        + "of database 13695 after 17.499 ms",
                "2026-11-28 02:29:43.076 UTC:21128:LOG:  process 21128 acquired RowExclusiveLock on relation 16521 "
                        + "of database 13695 after 12.031 ms",
                "2026-11-28 02:42:41.848 UTC:23079:LOG:  process 23079 acquired ExclusiveLock on extension of "
                        + "relation 16418 of database 13695 after 14.810 ms",
                "2026-11-28 02:44:24.081 UTC:444:LOG:  process 444 acquired ShareLock on transaction 1526 after "
                        + "68.739 ms",
                "2026-11-28 02:44:25.000 UTC:445:LOG:  process 445 acquired ExclusiveLock on advisory lock "
                        + "[13695,3410377009,10453,2] after 27.400 ms",
                "2026-11-28 02:44:26.000 UTC:446:LOG:  process 446 acquired ExclusiveLock on advisory lock "
                        + "[13695,3410377009,10464,2] after 44.200 ms",
                "2026-11-28 02:50:00.000 UTC:23079:LOG:  process 23079 acquired ShareLock on transaction 991 after "
                        + "99.000 ms", // after the span
                ""));
        Instant from = Instant.parse("2026-11-28T02:29:00Z");
        Instant to = Instant.parse("2026-11-28T02:45:00Z");
        assertEquals("ExclusiveLock on advisory locks (an issue's ledger, a shared note): 2, the longest "
                + "44.2 ms; ExclusiveLock on extension of relation 16418 of database 13695: 1, the longest 14.8 ms; "
                + "RowExclusiveLock on relation 16521 of database 13695: 2, the longest 17.5 ms; ShareLock on "
                + "transactions (a row another transaction changed): 1, the longest 68.7 ms",
                LockWaits.between(DatabaseLog.read(logs), from, to, null));
        assertEquals("none",
                LockWaits.between(DatabaseLog.read(logs), to.plusSeconds(3600), to.plusSeconds(7200), null));
    }
}
