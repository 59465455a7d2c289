package dev.agentx.clarify.github.sync;

/**
 * One field that differs between the local ledger and the one rebuilt from GitHub.
 *
 * @param record the clarification id
 * @param field the field's path in the record, e.g. {@code status} or {@code thread[1].body};
 *              {@code *} when the whole record is missing on one side
 * @param local the local value as JSON, or null when absent
 * @param github the rebuilt value as JSON, or null when absent
 */
public record Difference(String record, String field, String local, String github) {
}
