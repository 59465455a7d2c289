package dev.agentx.clarify.github.api;

/** A file of a repository's default branch, read through the contents API: its blob sha and its text. */
public record RepoFile(String sha, String text) {
}
