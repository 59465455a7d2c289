package dev.agentx.clarify.store.postgres;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ClaimTermsTest {
    private final AtomicLong ticks = new AtomicLong(1_000);
    private final ClaimTerms terms = new ClaimTerms();

    ClaimTermsTest() {
        terms.tickWith(ticks::get);
    }

    private void pass(Duration d) {
        ticks.addAndGet(d.toNanos());
    }

    private void beat(String replica) {
        terms.beaten(replica, terms.now());
    }

    @Test
    void aReplicaThatNeverBeatHasNoTerm() {
        assertEquals(OptionalLong.empty(), terms.current("a"));
    }

    @Test
    void beatsEachWithinTheHoldOfTheOneBeforeKeepOneTermHoweverLongItRuns() {
        beat("a");
        OptionalLong first = terms.current("a");
        assertEquals(OptionalLong.of(1), first);
        for (int i = 0; i < 100; i++) {
            pass(ClaimTerms.HOLD.minusMillis(1));
            assertEquals(first, terms.current("a"), "covered until the next heartbeat");
            beat("a");
        }
        assertEquals(first, terms.current("a"));
    }

    @Test
    void aTermLapsesAtTheHoldAfterTheLastHeartbeatWasSentAndTheNextHeartbeatStartsANewOne() {
        beat("a");
        pass(ClaimTerms.HOLD);
        assertEquals(OptionalLong.of(1), terms.current("a"), "covered up to the hold itself");
        pass(Duration.ofNanos(1));
        assertEquals(OptionalLong.empty(), terms.current("a"));
        beat("a");
        assertEquals(OptionalLong.of(2), terms.current("a"));
    }

    @Test
    void aPausedReplicaWhoseFirstHeartbeatAfterThePauseIsRecordedHasANewTerm() {
        beat("a");
        pass(Duration.ofSeconds(30)); // nobody looked at the term during the pause
        beat("a");
        assertEquals(OptionalLong.of(2), terms.current("a"));
    }

    @Test
    void aHeartbeatAnsweredLateCountsFromWhenItWasSentAndAnOlderOneChangesNothing() {
        beat("a");
        long sent = terms.now();
        pass(Duration.ofSeconds(9));
        long sentLater = terms.now();
        pass(Duration.ofSeconds(6)); // the database answered 6 s after it was sent
        terms.beaten("a", sentLater);
        assertEquals(OptionalLong.of(1), terms.current("a"), "sent 6 s ago, within the hold of the one before");
        terms.beaten("a", sent); // an older heartbeat's answer arriving after a newer one's
        assertEquals(OptionalLong.of(1), terms.current("a"));
        pass(Duration.ofSeconds(5));
        assertEquals(OptionalLong.empty(), terms.current("a"), "11 s after the last one recorded was sent");
    }

    @Test
    void eachReplicaHasATermOfItsOwn() {
        beat("a");
        pass(Duration.ofSeconds(20));
        beat("b");
        assertEquals(OptionalLong.empty(), terms.current("a"));
        assertEquals(OptionalLong.of(1), terms.current("b"));
    }
}
