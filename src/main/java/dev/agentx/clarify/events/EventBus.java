package dev.agentx.clarify.events;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * In-process publication: every event goes to the durable log first, then to each listener. A
 * failing listener is logged and does not stop the others.
 */
public final class EventBus implements EventSink {
    /** Looked up on first use: the CLI must not start the logging system unless something is logged. */
    private static Logger log() {
        return LoggerFactory.getLogger(EventBus.class);
    }

    private final EventSink log;
    private final List<Consumer<ClarificationEvent>> listeners = new CopyOnWriteArrayList<>();

    public EventBus(EventSink log) {
        this.log = log;
    }

    public void subscribe(Consumer<ClarificationEvent> listener) {
        listeners.add(listener);
    }

    @Override
    public void publish(List<ClarificationEvent> events) {
        if (events.isEmpty()) {
            return;
        }
        log.publish(events);
        for (ClarificationEvent e : events) {
            for (Consumer<ClarificationEvent> l : listeners) {
                try {
                    l.accept(e);
                } catch (RuntimeException ex) {
                    log().warn("event listener failed on {} {}: {}", e.event().wire(), e.clarificationId(), ex.toString());
                }
            }
        }
    }
}
