package dev.agentx.clarify.store.copy;

import java.util.SortedMap;
import java.util.TreeMap;

/**
 * What each issue of a repository shows on GitHub as a data dir records it (the server keeps it
 * in its outbox, whose format the GitHub adapter owns), by issue number, as JSON.
 */
@FunctionalInterface
public interface IssueStates {
    SortedMap<Integer, String> of(String repo);

    IssueStates NONE = repo -> new TreeMap<>();
}
