package dev.agentx.clarify.store;

import java.util.Optional;

/**
 * Small JSON values under names that every replica of a server sees: what the server has queued
 * for each issue on GitHub (the comments and labels), so a replica bringing an issue in step
 * with its ledger starts from what any replica did before, not from nothing.
 */
public interface Notes {
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
     * Puts {@code value}, written as JSON, under {@code name} (durable when this returns) and, in
     * the same transaction, claims for this replica the effects that no replica claimed yet
     * ({@link Replicas#claimEffect}), given as their key hashes and the effects as JSON (kept with
     * the claims): the effects the caller just queued, which it then sends without asking again.
     * Returns the hashes it claimed.
     */
    java.util.Set<String> putAndClaim(String name, Object value, java.util.Map<String, String> effects);
}
