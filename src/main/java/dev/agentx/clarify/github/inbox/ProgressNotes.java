package dev.agentx.clarify.github.inbox;

import dev.agentx.clarify.github.outbox.Outbox;
import dev.agentx.clarify.store.DeliveryQueue;
import dev.agentx.clarify.store.UnitOfWork;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongPredicate;

/**
 * How far each delivery got, on a store whose unit does not commit as one (the file store): a note
 * in the outbox journal per delivery ({@link #PROGRESS}), written after each command's effects and
 * durable with them, so a retry or the next start carries out no command twice. A note is forgotten
 * once the inbox has the delivery's done record on disk. Inside a unit that commits as one there are
 * no notes: an attempt that failed left nothing behind.
 */
final class ProgressNotes {
    /** The outbox note holding a delivery's progress: {@code inbox-progress/<number>}. */
    static final String PROGRESS = "inbox-progress/";

    private final DeliveryQueue inbox;
    private final Outbox outbox;
    private final UnitOfWork unit;
    /** Deliveries (by number) whose progress is a note, forgotten once the inbox has their done record on disk. */
    private final Set<Long> noted = ConcurrentHashMap.newKeySet();

    /** Finds the notes the outbox journal holds, and forgets those left by a crash after their delivery was done with. */
    ProgressNotes(DeliveryQueue inbox, Outbox outbox, UnitOfWork unit) {
        this.inbox = inbox;
        this.outbox = outbox;
        this.unit = unit;
        for (String name : outbox.noteNames(PROGRESS)) {
            noted.add(Long.parseLong(name.substring(PROGRESS.length())));
        }
        forgetDone();
    }

    /**
     * How far the delivery got: the commands done as the outbox note says (written with each
     * command's effects), the attempts and the next try as the queue keeps them ({@code kept}).
     */
    DeliveryQueue.Progress of(DeliveryQueue.Queued q, DeliveryQueue.Progress kept) {
        if (unit.atomic()) {
            return kept; // no progress notes: an attempt that failed left nothing behind
        }
        return outbox.note(PROGRESS + q.seq(), DeliveryQueue.Progress.class)
                .filter(n -> n.commandsDone() > kept.commandsDone())
                .map(n -> new DeliveryQueue.Progress(n.commandsDone(), n.refused(), kept.attempts(), kept.notBefore()))
                .orElse(kept);
    }

    /** Records a further command of the delivery as done: the note, in the outbox journal after its effects. */
    void note(DeliveryQueue.Queued q, DeliveryQueue.Progress p) {
        noted.add(q.seq());
        outbox.note(PROGRESS + q.seq(), p);
    }

    /**
     * Makes the inbox's done records durable (so a machine crash makes the next start process again
     * at most a tick's deliveries) and forgets the notes of deliveries durably done with.
     */
    void forgetDone() {
        LongPredicate done = inbox.syncDone();
        for (Long n : List.copyOf(noted)) {
            if (done.test(n)) {
                outbox.forget(PROGRESS + n);
                noted.remove(n);
            }
        }
    }
}
