package dev.agentx.clarify.github.sync;

import java.util.Objects;

/** One comment of an issue as the API lists it: its id, its author's login and its body. */
public record IssueComment(long id, String author, String body) {
    public IssueComment {
        Objects.requireNonNull(author, "author");
        body = body == null ? "" : body;
    }
}
