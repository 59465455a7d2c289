package dev.agentx.clarify.github;

import java.nio.file.Path;
import java.util.regex.Pattern;

/**
 * A repository by owner and name, as the payload names it, checked so it is safe in a path; and
 * GitHub's id of it ({@code id}, 0 when not known), which never changes while the name may (a
 * rename, a transfer) and may pass to another repository. The server keeps a repository's state
 * by its id ({@link #stateKey}), so two refs are the same repository only with the same id.
 */
public record RepoRef(String owner, String name, long id) {
    /** An owner or a name; compiled once, for a ref is made for every API call the server sends. */
    private static final Pattern PART = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,99}");

    public RepoRef {
        if (owner == null || !PART.matcher(owner).matches() || name == null || !PART.matcher(name).matches()
                || name.endsWith(".")) {
            throw new IllegalArgumentException("not a GitHub repository name: '" + owner + "/" + name + "'");
        }
        if (id < 0) {
            throw new IllegalArgumentException("not a GitHub repository id: " + id);
        }
    }

    /** A repository by name alone, its id not known. */
    public RepoRef(String owner, String name) {
        this(owner, name, 0);
    }

    /** {@code owner/name}, checked as the constructor does; its id not known. */
    public static RepoRef parse(String fullName) {
        int slash = fullName.indexOf('/');
        if (slash < 0) {
            throw new IllegalArgumentException("not a GitHub repository name: '" + fullName + "'");
        }
        return new RepoRef(fullName.substring(0, slash), fullName.substring(slash + 1));
    }

    /** The same repository under the id {@code id}. */
    public RepoRef withId(long id) {
        return new RepoRef(owner, name, id);
    }

    public String fullName() {
        return owner + "/" + name;
    }

    /**
     * The key of this repository's state in the stores: its id in decimal (the folder
     * {@code repos/<id>/}, the {@code repo} column on PostgreSQL). A name without an id has no
     * state of its own.
     */
    public String stateKey() {
        if (id <= 0) {
            throw new IllegalStateException("repository " + fullName() + " has no GitHub id: its state cannot be found");
        }
        return String.valueOf(id);
    }

    /** {@code <dataDir>/repos/<id>}: the root of this repository's {@code .agentx/} state. */
    public Path rootIn(Path dataDir) {
        return dataDir.resolve("repos").resolve(stateKey());
    }

    @Override
    public String toString() {
        return fullName();
    }
}
