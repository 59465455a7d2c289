package dev.agentx.clarify.github.commands;

/**
 * One {@code /clarify} command found in a comment (docs/github-app.md). {@code source} is the
 * whole command as written, quoted back in replies: its first line (leading spaces dropped) and
 * the lines that continue it, trailing blank lines dropped; for a trigger label it is
 * {@code label <name>}. Ids are upper-cased and checked for form only.
 */
public sealed interface CommentCommand {
    String source();

    /** {@code /clarify @<role> [--non-blocking] [--topic "..."] <question>}; topic may be null. */
    record Ask(String source, String role, boolean blocking, String topic, String question) implements CommentCommand {
    }

    /** {@code /clarify answer [CLR-N-NNN] <answer>}; id null when left out. */
    record Answer(String source, String id, String text) implements CommentCommand {
    }

    /** {@code /clarify followup CLR-N-NNN <question>}. */
    record FollowUp(String source, String id, String question) implements CommentCommand {
    }

    /** {@code /clarify resolve CLR-N-NNN [note]}; note may be null. */
    record Resolve(String source, String id, String note) implements CommentCommand {
    }

    /** {@code /clarify escalate CLR-N-NNN [reason]}; reason may be null. */
    record Escalate(String source, String id, String reason) implements CommentCommand {
    }

    /** {@code /clarify abandon CLR-N-NNN [reason]}; reason may be null. */
    record Abandon(String source, String id, String reason) implements CommentCommand {
    }

    /** {@code /clarify accept CLR-N-NNN}: a person confirms an agent's proposed answer (autonomy approve). */
    record Accept(String source, String id) implements CommentCommand {
    }

    /** {@code /clarify status}: the clarifications. */
    record Status(String source) implements CommentCommand {
    }

    /** {@code /clarify help}: the command grammar. */
    record Help(String source) implements CommentCommand {
    }

    /** A line that starts with {@code /clarify} but does not follow the grammar; {@code problem} says why. */
    record Invalid(String source, String problem) implements CommentCommand {
    }
}
