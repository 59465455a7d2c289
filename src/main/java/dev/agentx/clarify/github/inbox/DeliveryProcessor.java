package dev.agentx.clarify.github.inbox;

import java.util.function.Consumer;

/** What the worker hands each delivery to (GitHub Mode: {@code handlers.DeliveryHandler}). */
@FunctionalInterface
public interface DeliveryProcessor {
    /**
     * Processes the delivery. {@code progress} says how far an earlier, interrupted attempt got;
     * {@code save} records each further step durably, so none runs twice. Throwing means: try
     * again later.
     */
    void handle(InboundDelivery delivery, Inbox.Progress progress, Consumer<Inbox.Progress> save);
}
