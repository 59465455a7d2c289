package dev.agentx.clarify.store.copy;

import dev.agentx.clarify.store.Acknowledged;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * What one side's delivery queue holds of what a copy carries: deliveries acknowledged and not
 * done with, ids of deliveries done with, and a SHA-256 over both (each delivery as received,
 * with its failed attempts and next try; each id with when it was done with).
 */
public record DeliveryTally(int waiting, int done, String checksum) {
    /**
     * Counts and a SHA-256 over deliveries in their order and ids in theirs: each delivery's id,
     * event, time received, order key, failed attempts, next try and body; each id with when it
     * was done with. Times to the microsecond, as a database keeps them.
     */
    static DeliveryTally of(Acknowledged a) {
        Sha256 sha = new Sha256().add("waiting\n");
        for (Acknowledged.Waiting w : a.waiting()) {
            sha.add(w.id() + "\n" + w.event() + "\n" + micros(w.receivedAt()) + "\n" + w.key() + "\n"
                    + w.attempts() + "\n" + micros(w.notBefore()) + "\n" + w.body().length + "\n");
            sha.add(w.body());
        }
        sha.add("done\n");
        a.done().forEach((id, at) -> sha.add(id + " " + micros(at) + "\n"));
        return new DeliveryTally(a.waiting().size(), a.done().size(), sha.checksum());
    }

    private static String micros(Instant at) {
        return at == null ? "-" : at.truncatedTo(ChronoUnit.MICROS).toString();
    }
}
