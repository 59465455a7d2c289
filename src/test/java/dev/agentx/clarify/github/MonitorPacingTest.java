package dev.agentx.clarify.github;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.agentx.clarify.support.MutableClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class MonitorPacingTest {
    private final MutableClock clock = MutableClock.at("2026-11-26T10:00:00Z");
    private final List<String> ran = new ArrayList<>();
    /** Passes handed to the scheduler, with their delays; the test runs them. */
    private final List<Runnable> scheduled = new ArrayList<>();
    private final List<Duration> delays = new ArrayList<>();
    private final MonitorPacing pacing = new MonitorPacing(clock, Duration.ofSeconds(1), (delay, pass) -> {
        delays.add(delay);
        scheduled.add(pass);
    });

    private Runnable pass(String name) {
        return () -> ran.add(name);
    }

    @Test
    void eventsWithinThePaceShareOnePassThatRunsWithTheNewestContext() {
        pacing.after("acme/shop", pass("e1"));
        assertEquals(List.of("e1"), ran, "the first event's pass runs at once");

        clock.advance(Duration.ofMillis(300));
        pacing.after("acme/shop", pass("e2"));
        clock.advance(Duration.ofMillis(200));
        pacing.after("acme/shop", pass("e3"));
        assertEquals(List.of("e1"), ran);
        assertEquals(List.of(Duration.ofMillis(700)), delays, "one pass, when a second has passed since e1's");

        clock.advance(Duration.ofMillis(500));
        scheduled.get(0).run();
        assertEquals(List.of("e1", "e3"), ran);

        clock.advance(Duration.ofMillis(400));
        pacing.after("acme/shop", pass("e4"));
        assertEquals(List.of(Duration.ofMillis(700), Duration.ofMillis(600)), delays,
                "paced from the scheduled pass's start");
        clock.advance(Duration.ofSeconds(5));
        scheduled.get(1).run();
        pacing.after("acme/shop", pass("e5"));
        assertEquals(List.of("e1", "e3", "e4"), ran, "e5 within a second of e4's pass");

        clock.advance(Duration.ofSeconds(1));
        scheduled.get(2).run();
        clock.advance(Duration.ofSeconds(1));
        pacing.after("acme/shop", pass("e6"));
        assertEquals(List.of("e1", "e3", "e4", "e5", "e6"), ran, "a second after the last pass: at once");
    }

    @Test
    void repositoriesArePacedApart() {
        pacing.after("acme/shop", pass("shop"));
        pacing.after("acme/web", pass("web"));
        assertEquals(List.of("shop", "web"), ran);
        assertEquals(List.of(), delays);
    }

    @Test
    void aSchedulerThatStoppedLeavesTheNextEventItsPass() {
        MonitorPacing stopping = new MonitorPacing(clock, Duration.ofSeconds(1), (delay, pass) -> {
            throw new java.util.concurrent.RejectedExecutionException("stopped");
        });
        stopping.after("acme/shop", pass("e1"));
        stopping.after("acme/shop", pass("e2")); // within the pace, and the scheduler refuses it
        clock.advance(Duration.ofSeconds(1));
        stopping.after("acme/shop", pass("e3"));
        assertEquals(List.of("e1", "e3"), ran);
    }

    @Test
    void inlineRunsEveryPassAtOnce() {
        MonitorPacing inline = MonitorPacing.inline();
        inline.after("acme/shop", pass("e1"));
        inline.after("acme/shop", pass("e2"));
        assertEquals(List.of("e1", "e2"), ran);
    }
}
