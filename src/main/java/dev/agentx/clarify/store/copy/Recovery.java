package dev.agentx.clarify.store.copy;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.UncheckedIOException;
import java.util.Optional;

/**
 * What became of the recovery pass's position (where the server stopped asking GitHub for
 * missed deliveries, and what it asked for), which the copy hands over so that the server on
 * the destination does not ask GitHub again for three days of deliveries it never received
 * there.
 */
public enum Recovery {
    HANDED_OVER("the recovery pass's position handed over"),
    /** The destination has one of its own, which it keeps. */
    DESTINATION_HOLDS_ONE("the destination's recovery position kept"),
    NONE_AT_SOURCE("no recovery position at the source"),
    /** The source's is not JSON; the server on the destination scans GitHub's three days once. */
    UNREADABLE_AT_SOURCE("the source's recovery position is unreadable, not handed over");

    private final String words;

    Recovery(String words) {
        this.words = words;
    }

    /** Hands the source's position to the destination, unless it has none or the destination has one. */
    static Recovery handOver(Side source, Side destination) {
        Optional<JsonNode> position;
        try {
            position = source.recovery().read();
        } catch (UncheckedIOException e) {
            return UNREADABLE_AT_SOURCE;
        }
        if (position.isEmpty()) {
            return NONE_AT_SOURCE;
        }
        if (destination.recovery().read().isPresent()) {
            return DESTINATION_HOLDS_ONE;
        }
        destination.recovery().write(position.get());
        return HANDED_OVER;
    }

    @Override
    public String toString() {
        return words;
    }
}
