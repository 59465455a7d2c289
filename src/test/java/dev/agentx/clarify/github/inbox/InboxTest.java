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

    @Test
    void anInboxOfTheEarlierFileLayoutIsTakenOver() throws Exception {
        MutableClock clock = MutableClock.at("2026-02-26T10:00:00Z");
        java.nio.file.Path pending = java.nio.file.Files.createDirectories(dir.resolve("pending"));
        java.nio.file.Path seen = java.nio.file.Files.createDirectories(dir.resolve("seen"));
        var json = dev.agentx.clarify.files.JsonSupport.mapper();
        java.nio.file.Files.write(pending.resolve("00000000000000000004-waiting.json"), json.writeValueAsBytes(
                new InboundDelivery("waiting", "ping", clock.instant(), "{}".getBytes(StandardCharsets.UTF_8))));
        java.nio.file.Files.write(pending.resolve("00000000000000000004-waiting.progress"),
                json.writeValueAsBytes(new Inbox.Progress(1, true, 2, null)));
        // that version marked ids seen when they were accepted: a pending one is not done
        java.nio.file.Files.writeString(seen.resolve("waiting"), clock.instant().toString());
        java.nio.file.Files.writeString(seen.resolve("processed"), clock.instant().toString());

        Inbox inbox = new Inbox(dir, clock);
        assertEquals(1, inbox.size());
        assertEquals(new Inbox.Progress(1, true, 2, null), inbox.progress(inbox.pending().get(0)));
        assertEquals(Inbox.Accepted.DUPLICATE, inbox.accept("processed", "ping", body()));
        assertEquals(Inbox.Accepted.DUPLICATE, inbox.accept("waiting", "ping", body()));
        assertEquals(false, java.nio.file.Files.exists(seen));
        inbox.done(inbox.pending().get(0));
        Inbox again = new Inbox(dir, clock);
        assertEquals(0, again.size());
        assertEquals(Inbox.Accepted.DUPLICATE, again.accept("waiting", "ping", body()));
        assertEquals(Inbox.Accepted.QUEUED, again.accept("new", "ping", body()));
        assertEquals(5, Long.parseLong(again.pending().get(0).getFileName().toString().substring(0, 20)),
                "numbering goes on after the highest taken over");
    }

    private static byte[] body() {
        return "{}".getBytes(StandardCharsets.UTF_8);
    }
}
