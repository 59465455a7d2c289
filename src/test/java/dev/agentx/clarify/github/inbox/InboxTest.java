package dev.agentx.clarify.github.inbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.agentx.clarify.support.MutableClock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class InboxTest {
    @TempDir
    Path dir;

    @Test
    void deliveryIdsAreRememberedLongerThanGitHubsRedeliveryWindow() {
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        Inbox inbox = new Inbox(dir, clock);
        byte[] body = "{}".getBytes(StandardCharsets.UTF_8);
        assertEquals(Inbox.Accepted.QUEUED, inbox.accept("d-1", "ping", body));
        inbox.done(inbox.pending().get(0));
        clock.advance(Duration.ofDays(3).plusHours(1));
        inbox.prune();
        assertEquals(Inbox.Accepted.DUPLICATE, new Inbox(dir, clock).accept("d-1", "ping", body));
        clock.advance(Inbox.KEEP_SEEN);
        inbox.prune();
        assertEquals(Inbox.Accepted.QUEUED, inbox.accept("d-1", "ping", body));
    }

    @Test
    void pendingDeliveriesKeepTheirOrderAcrossRestarts() {
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        Inbox inbox = new Inbox(dir, clock);
        inbox.accept("b", "ping", new byte[] {1});
        inbox.accept("a", "ping", new byte[] {2});
        Inbox again = new Inbox(dir, clock);
        again.accept("c", "ping", new byte[] {3});
        assertEquals(java.util.List.of("b", "a", "c"), again.pending().stream().map(p -> again.read(p).id()).toList());
        assertEquals(3, again.read(again.pending().get(2)).body()[0]);
        assertThrows(IllegalArgumentException.class, () -> again.accept("../x", "ping", new byte[0]));
    }
}
