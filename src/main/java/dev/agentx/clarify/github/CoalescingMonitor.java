package dev.agentx.clarify.github;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.routing.Outcome;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Runs a repository's monitor pass after each delivered event without running passes of one
 * repository side by side. The worker handles deliveries of different issues at once; when one
 * asks for a pass while another pass of the same repository is under way, it does not wait: the
 * pass under way is run once more when it ends, and that one starts after the caller's event was
 * written, so it sees it. Its outcomes go to the thread that ran it. Under a burst of events this
 * also turns many passes into a few.
 */
public final class CoalescingMonitor implements RepositoryMonitor {
    private final RepositoryMonitor monitor;
    private final Map<Path, State> states = new ConcurrentHashMap<>();

    private static final class State {
        boolean running;
        boolean again;
    }

    public CoalescingMonitor(RepositoryMonitor monitor) {
        this.monitor = monitor;
    }

    @Override
    public List<Outcome> run(LocalMode repository) {
        State state = states.computeIfAbsent(repository.root(), r -> new State());
        synchronized (state) {
            if (state.running) {
                state.again = true;
                return List.of();
            }
            state.running = true;
        }
        List<Outcome> outcomes = new ArrayList<>();
        boolean finished = false;
        try {
            while (true) {
                outcomes.addAll(monitor.run(repository));
                synchronized (state) {
                    if (!state.again) {
                        state.running = false;
                        finished = true;
                        return outcomes;
                    }
                    state.again = false;
                }
            }
        } finally {
            if (!finished) {
                synchronized (state) {
                    // the pass failed: the callers it stood for are not left without one next time
                    state.running = false;
                }
            }
        }
    }
}
