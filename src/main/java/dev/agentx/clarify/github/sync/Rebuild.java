package dev.agentx.clarify.github.sync;

import dev.agentx.clarify.protocol.Ledger;
import java.util.List;
import java.util.Optional;

/**
 * A ledger rebuilt from an issue's comments.
 *
 * @param ledger the ledger, empty when the app posted no marker on the issue
 * @param used how many of the app's comments carried a marker that was used
 * @param ignored comments that carry a marker but were not written by the app (forged or copied)
 * @param problems why the ledger could not be rebuilt (damaged markers, missing thread entries);
 *                 when not empty, {@code ledger} is empty
 */
public record Rebuild(int issue, Optional<Ledger> ledger, int used, List<String> ignored, List<String> problems) {
    public Rebuild {
        ignored = List.copyOf(ignored);
        problems = List.copyOf(problems);
    }
}
