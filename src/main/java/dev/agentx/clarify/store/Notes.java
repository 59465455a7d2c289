package dev.agentx.clarify.store;

import java.util.Optional;

/**
 * Small JSON values under names that every replica of a server sees: what the server has queued
 * for each issue on GitHub (the comments and labels), so a replica bringing an issue in step
 * with its ledger starts from what any replica did before, not from nothing; and where the
 * recovery pass stopped asking GitHub for missed deliveries, so whichever replica runs the next
 * pass goes on from there.
 */
public interface Notes {
    /**
     * The note of the recovery pass: where it stopped and the deliveries it asked GitHub for (on
     * files, the data dir's {@code recovery.json}).
     */
    String RECOVERY = "recovery";

    /**
     * The name of the note holding what the server has put on GitHub for an issue of
     * {@code repo} ({@code owner/name}): the comments posted per record, the labels set.
     */
    static String issueNote(String repo, int issue) {
        return issueNotesOf(repo) + issue;
    }

    /** What every {@link #issueNote} starts with. */
    String ISSUE_NOTE_PREFIX = "mirror/";

    /** What every {@link #issueNote} of {@code repo} starts with (up to and with the '#'). */
    static String issueNotesOf(String repo) {
        return ISSUE_NOTE_PREFIX + repo + "#";
    }

    /** The issue number of {@code name} if it is an {@link #issueNote} of {@code repo}. */
    static java.util.OptionalInt issueOf(String repo, String name) {
        String prefix = issueNotesOf(repo);
        if (!name.startsWith(prefix)) {
            return java.util.OptionalInt.empty();
        }
        String number = name.substring(prefix.length());
        if (number.isEmpty() || number.length() > 9 || !number.chars().allMatch(c -> c >= '0' && c <= '9')) {
            return java.util.OptionalInt.empty();
        }
        return java.util.OptionalInt.of(Integer.parseInt(number));
    }

    /** The value last put under {@code name}, read as {@code type}, if any. */
    <T> Optional<T> get(String name, Class<T> type);

    /**
     * Puts {@code value}, written as JSON, under {@code name}: inside the calling thread's unit
     * ({@link UnitOfWork}) committed with it, else at once.
     */
    void put(String name, Object value);

    /**
     * Inside the calling thread's unit: takes the lock of the note {@code name} (waiting while
     * another unit holds it), held until the unit ends, then reads it as {@link #get} does. So
     * units that read a note, change what it speaks of and put it again take turns.
     */
    <T> Optional<T> lock(String name, Class<T> type);
}
