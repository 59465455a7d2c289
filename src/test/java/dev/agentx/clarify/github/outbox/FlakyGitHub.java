package dev.agentx.clarify.github.outbox;

import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.github.api.GitHubApiException;
import dev.agentx.clarify.github.api.GitHubGateway;
import dev.agentx.clarify.github.api.RepoFile;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * GitHub as the outbox's tests need it: a comment whose body ends in {@code -fail} is refused
 * (422), one ending in {@code -retry} fails once (502); the others are recorded as posted.
 */
public final class FlakyGitHub implements GitHubGateway {
    private final Set<String> failedOnce = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final java.util.concurrent.atomic.AtomicLong ids = new java.util.concurrent.atomic.AtomicLong();
    /**
     * The bodies of the comments created, in order; senders on other threads add to it while a
     * test reads it, so reading copies nothing and never fails.
     */
    final List<String> posted = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** The comments on GitHub now, by id: those created and not deleted. */
    final java.util.concurrent.ConcurrentSkipListMap<Long, String> comments =
            new java.util.concurrent.ConcurrentSkipListMap<>();
    /** Each write, as {@code <call> <installation> <owner/name>#<issue>}, in order. */
    final List<String> calls = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Runs with each comment's body before it is created (a test holds a send there). */
    public volatile java.util.function.Consumer<String> beforePost = body -> { };

    @Override
    public long createComment(long installation, RepoRef repo, int issue, String body) {
        calls.add("comment " + installation + " " + repo.fullName() + "#" + issue);
        beforePost.accept(body);
        if (body.endsWith("-fail")) {
            throw new GitHubApiException("422 Unprocessable", 422, null, false, null);
        }
        if (body.endsWith("-retry") && failedOnce.add(body)) {
            throw new GitHubApiException("502 Bad Gateway", 502, null, false, null);
        }
        long id = ids.incrementAndGet();
        comments.put(id, body);
        posted.add(body);
        return id;
    }

    @Override
    public List<Long> commentsContaining(long installation, RepoRef repo, int issue, String text, Instant since) {
        return comments.entrySet().stream().filter(c -> c.getValue().contains(text)).map(java.util.Map.Entry::getKey)
                .toList();
    }

    @Override
    public void deleteComment(long installation, RepoRef repo, long commentId) {
        comments.remove(commentId);
    }

    @Override
    public long replyInReviewThread(long installation, RepoRef repo, int pull, long thread, String body) {
        return createComment(installation, repo, pull, body);
    }

    @Override
    public List<Long> reviewCommentsContaining(long installation, RepoRef repo, int pull, String text, Instant since) {
        return commentsContaining(installation, repo, pull, text, since);
    }

    @Override
    public void deleteReviewComment(long installation, RepoRef repo, long commentId) {
        deleteComment(installation, repo, commentId);
    }

    @Override
    public void reactToComment(long installation, RepoRef repo, int issue, long commentId, String content) {
        calls.add("reactToComment " + installation + " " + repo.fullName() + "#" + issue);
    }

    @Override
    public void reactToIssue(long installation, RepoRef repo, int issue, String content) {
        calls.add("reactToIssue " + installation + " " + repo.fullName() + "#" + issue);
    }

    @Override
    public void addLabels(long installation, RepoRef repo, int issue, List<String> labels) {
        calls.add("addLabels " + installation + " " + repo.fullName() + "#" + issue);
    }

    @Override
    public void removeLabel(long installation, RepoRef repo, int issue, String label) {
        calls.add("removeLabel " + installation + " " + repo.fullName() + "#" + issue);
    }

    @Override
    public String permission(long installation, RepoRef repo, String login) {
        return "write";
    }

    @Override
    public Optional<RepoFile> fileOnDefaultBranch(long installation, RepoRef repo, String path) {
        return Optional.empty();
    }

    @Override
    public Set<String> teamMembers(long installation, String org, String slug) {
        return Set.of();
    }

    @Override
    public java.util.OptionalLong installationOf(RepoRef repo) {
        return java.util.OptionalLong.of(1);
    }

    @Override
    public Optional<RepoRef> repositoryOf(long installation, RepoRef repo) {
        return Optional.empty();
    }

    @Override
    public Optional<String> loginOf(String userToken) {
        return Optional.empty();
    }

    @Override
    public DeliveryPage deliveries(String cursor) {
        return new DeliveryPage(List.of(), null);
    }

    @Override
    public void redeliver(long id) {
        throw new UnsupportedOperationException("not in these tests");
    }

    @Override
    public List<CheckRunSeen> checkRuns(long installation, RepoRef repo, String sha, String name) {
        return List.of();
    }

    @Override
    public long createCheckRun(long installation, RepoRef repo, CheckRunOutput run) {
        return ids.incrementAndGet();
    }

    @Override
    public void updateCheckRun(long installation, RepoRef repo, long id, CheckRunOutput run) {
    }
}
