package dev.agentx.clarify.github.sync;

import dev.agentx.clarify.files.IoErrors;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.github.api.GitHubApiException;
import dev.agentx.clarify.github.auth.AppJwt;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.kohsuke.github.GHAppInstallation;
import org.kohsuke.github.GHException;
import org.kohsuke.github.GHIssue;
import org.kohsuke.github.GHIssueComment;
import org.kohsuke.github.GHIssueState;
import org.kohsuke.github.GitHub;
import org.kohsuke.github.GitHubBuilder;
import org.kohsuke.github.HttpException;

/**
 * {@link CommentSource} with hub4j against {@code GITHUB_API_URL}: the app's slug from
 * {@code GET /app}, the installation from {@code GET /repos/{owner}/{repo}/installation} (both with
 * the app's JWT), then one installation token per repository for the reads; a pull request's
 * review comments as plain JSON with the same token.
 */
public final class Hub4jCommentSource implements CommentSource {
    private final String apiUrl;
    private final GitHub app;
    private final Map<RepoRef, GHAppInstallation> installations = new ConcurrentHashMap<>();
    private final Map<RepoRef, GitHub> clients = new ConcurrentHashMap<>();
    private final Map<RepoRef, String> tokens = new ConcurrentHashMap<>();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).build();
    private static final ObjectMapper JSON = new ObjectMapper();

    public Hub4jCommentSource(String apiUrl, AppJwt jwt) {
        this.apiUrl = apiUrl;
        try {
            this.app = new GitHubBuilder().withEndpoint(apiUrl).withAuthorizationProvider(() -> "Bearer " + jwt.token())
                    .build();
        } catch (IOException e) {
            throw new IllegalStateException("cannot set up the GitHub client for " + apiUrl + ": " + e.getMessage(), e);
        }
    }

    @FunctionalInterface
    private interface Call<T> {
        T run() throws IOException;
    }

    private static <T> T call(String what, Call<T> call) {
        try {
            return call.run();
        } catch (HttpException e) {
            int status = e.getResponseCode();
            throw new GitHubApiException(what + (status > 0 ? ": HTTP " + status : ": no response: "
                    + IoErrors.innermost(e)), status, null, false, e);
        } catch (FileNotFoundException e) {
            throw new GitHubApiException(what + ": HTTP 404 (not found, or the app lacks access)", 404, null, false, e);
        } catch (IOException e) {
            throw new GitHubApiException(what + ": no response: " + IoErrors.innermost(e), -1, null, false, e);
        } catch (GHException e) {
            // paged lists fail with an unchecked GHException around the HTTP failure
            Throwable cause = e.getCause();
            int status = cause instanceof HttpException h ? h.getResponseCode()
                    : cause instanceof FileNotFoundException ? 404 : -1;
            throw new GitHubApiException(what + ": " + (status > 0 ? "HTTP " + status : e.getMessage()), status,
                    null, false, e);
        }
    }

    @Override
    public String appLogin() {
        return call("GET /app", () -> app.getApp().getSlug() + "[bot]");
    }

    private GHAppInstallation install(RepoRef repo) {
        return installations.computeIfAbsent(repo, r -> call("the app's installation on " + r,
                () -> app.getApp().getInstallationByRepository(r.owner(), r.name())));
    }

    @Override
    public long installation(RepoRef repo) {
        return install(repo).getId();
    }

    private GitHub client(RepoRef repo) {
        return clients.computeIfAbsent(repo, r -> call("an installation token for " + r, () -> {
            String token = install(r).createToken().create().getToken();
            tokens.put(r, token);
            return new GitHubBuilder().withEndpoint(apiUrl).withAppInstallationToken(token).build();
        }));
    }

    /** GitHub's largest page of review comments. */
    private static final int REVIEW_PAGE = 100;

    /**
     * The review comments of pull request {@code pull}, oldest first ({@code GET
     * /repos/{owner}/{repo}/pulls/{pull_number}/comments}), read as plain JSON: hub4j's review
     * comment looks its author up with a request of its own each.
     */
    private List<IssueComment> reviewComments(RepoRef repo, int pull) {
        String what = "list review comments of " + repo + "#" + pull;
        client(repo);
        List<IssueComment> out = new ArrayList<>();
        for (int page = 1; ; page++) {
            HttpRequest request = HttpRequest.newBuilder(URI.create(apiUrl.replaceAll("/+$", "") + "/repos/"
                            + repo.owner() + "/" + repo.name() + "/pulls/" + pull + "/comments?per_page=" + REVIEW_PAGE
                            + "&page=" + page)).timeout(Duration.ofSeconds(30))
                    .header("Accept", "application/vnd.github+json").header("X-GitHub-Api-Version", "2022-11-28")
                    .header("Authorization", "token " + tokens.get(repo)).GET().build();
            JsonNode list;
            try {
                HttpResponse<byte[]> r = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
                if (r.statusCode() / 100 != 2) {
                    throw new GitHubApiException(what + ": HTTP " + r.statusCode() + (r.statusCode() == 404
                            ? " (not found, or the app lacks access)" : ""), r.statusCode(), null, false, null);
                }
                list = JSON.readTree(r.body());
            } catch (IOException e) {
                throw new GitHubApiException(what + ": no response: " + IoErrors.innermost(e), -1, null, false, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new GitHubApiException(what + ": interrupted", -1, null, false, e);
            }
            if (list == null || !list.isArray()) {
                throw new GitHubApiException(what + ": GitHub's answer is no list", 200, null, false, null);
            }
            for (JsonNode c : list) {
                out.add(new IssueComment(c.path("id").asLong(), c.path("user").path("login").asText(""),
                        c.path("body").asText("")));
            }
            if (list.size() < REVIEW_PAGE) {
                return out;
            }
        }
    }

    @Override
    public RepoRef repository(RepoRef repo) {
        return call("read repository " + repo, () -> {
            org.kohsuke.github.GHRepository r = client(repo).getRepository(repo.fullName());
            return new RepoRef(r.getOwnerName(), r.getName(), r.getId());
        });
    }

    @Override
    public List<Integer> issuesWithComments(RepoRef repo) {
        return call("list issues of " + repo, () -> {
            TreeSet<Integer> out = new TreeSet<>();
            for (GHIssue i : client(repo).getRepository(repo.fullName()).queryIssues().state(GHIssueState.ALL)
                    .list()) {
                if (i.getCommentsCount() > 0) {
                    out.add(i.getNumber());
                }
            }
            return List.copyOf(out);
        });
    }

    @Override
    public List<IssueComment> comments(RepoRef repo, int issue) {
        // two requests, each named in its failure: a 404 of the issue (deleted, moved) is not one of its comments
        org.kohsuke.github.GHIssue found = call("read issue " + repo + "#" + issue,
                () -> client(repo).getRepository(repo.fullName()).getIssue(issue));
        List<IssueComment> out = call("list comments of " + repo + "#" + issue, () -> {
            List<IssueComment> comments = new ArrayList<>();
            for (GHIssueComment c : found.listComments()) {
                comments.add(new IssueComment(c.getId(), c.getUserName() == null ? "" : c.getUserName(), c.getBody()));
            }
            return comments;
        });
        if (found.isPullRequest()) {
            // a clarification asked in review has every comment in its review thread, none on the
            // conversation: after the issue's comments, each record's comments are still oldest first
            out.addAll(reviewComments(repo, issue));
        }
        return out;
    }
}
