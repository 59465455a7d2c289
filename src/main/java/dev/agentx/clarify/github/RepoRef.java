package dev.agentx.clarify.github;

import java.nio.file.Path;

/** A repository by owner and name, as the payload names it; checked so it is safe as a directory name. */
public record RepoRef(String owner, String name) {
    private static final String PART = "[A-Za-z0-9][A-Za-z0-9._-]{0,99}";

    public RepoRef {
        if (owner == null || !owner.matches(PART) || name == null || !name.matches(PART) || name.endsWith(".")) {
            throw new IllegalArgumentException("not a GitHub repository name: '" + owner + "/" + name + "'");
        }
    }

    /** {@code owner/name}, checked as the constructor does. */
    public static RepoRef parse(String fullName) {
        int slash = fullName.indexOf('/');
        if (slash < 0) {
            throw new IllegalArgumentException("not a GitHub repository name: '" + fullName + "'");
        }
        return new RepoRef(fullName.substring(0, slash), fullName.substring(slash + 1));
    }

    public String fullName() {
        return owner + "/" + name;
    }

    /** {@code <dataDir>/repos/<owner>/<repo>}: the root of this repository's {@code .agentx/} state. */
    public Path rootIn(Path dataDir) {
        return dataDir.resolve("repos").resolve(owner).resolve(name);
    }

    @Override
    public String toString() {
        return fullName();
    }
}
