package dev.agentx.clarify.store.copy;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What a copy wrote to the destination, by repository, with the issues whose GitHub state it
 * handed over and the notes it handed over: what a copy that fails or does not match removes again, so that it can simply be
 * run again.
 */
final class Written {
    private final Side destination;
    private final Map<String, Set<Integer>> repositories = new LinkedHashMap<>();
    private final Map<String, Set<String>> notes = new LinkedHashMap<>();

    Written(Side destination) {
        this.destination = destination;
    }

    /** {@code repo} is being written, with the GitHub states of {@code issues} and the notes named {@code notes}. */
    void add(String repo, Set<Integer> issues, Set<String> notes) {
        repositories.put(repo, issues);
        this.notes.put(repo, notes);
    }

    /**
     * Removes what the copy wrote, and the deliveries {@code uncarry} takes out again (null: none
     * were carried), from the destination, saying what came of it.
     */
    String remove(Runnable uncarry) {
        String deliveries = "";
        if (uncarry != null) {
            try {
                uncarry.run();
            } catch (RuntimeException e) {
                deliveries = "the deliveries it carried could not be taken out again (" + e.getMessage() + "); a "
                        + "copy run again leaves those there as they are. ";
            }
        }
        List<String> left = new ArrayList<>();
        for (Map.Entry<String, Set<Integer>> w : repositories.entrySet()) {
            try {
                destination.forget(w.getKey(), w.getValue(), notes.get(w.getKey()));
            } catch (RuntimeException e) {
                left.add(w.getKey() + " (" + e.getMessage() + ")");
            }
        }
        return deliveries + (left.isEmpty() ? "what it wrote there was removed again, so the copy can be run again."
                : "what it wrote could not be removed for " + String.join(", ", left) + ": empty those "
                + "repositories' state there before copying again.");
    }
}
