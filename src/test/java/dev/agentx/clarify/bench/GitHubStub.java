package dev.agentx.clarify.bench;

import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.HandlerType;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiConsumer;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * GitHub's API for the webhook benchmark: the answers {@code GitHubRig} stubs in WireMock for the
 * tests (an installation token, comments, reactions, labels, permissions, a team), the same
 * bodies and GitHub's rate-limit headers, from a plain Javalin handler. WireMock matches every
 * request against its stubs, runs its extensions and listeners and renders its answer, which
 * took about 1.1 ms of CPU per delivery of the benchmark (three or four API calls); on the two
 * cores the server has, that is the stub's share, not GitHub's. A request the stub has no answer
 * for gets GitHub's 404 and is counted ({@link #unanswered}), so a benchmark can say whether the
 * server asked for anything the stub does not know.
 */
final class GitHubStub implements AutoCloseable {
    private final Javalin app;
    /** Requests answered 404 because the stub knows no such path, by method and path. */
    private final Map<String, LongAdder> unanswered = new ConcurrentHashMap<>();

    /**
     * {@code repo}: {@code /repos/owner/name}; {@code onComment} sees each comment POSTed (issue
     * number and the request's body) before it is answered.
     */
    GitHubStub(String repo, BiConsumer<Integer, String> onComment) {
        QueuedThreadPool pool = new QueuedThreadPool(16, 4);
        pool.setName("github-stub");
        app = Javalin.create(cfg -> {
            cfg.startup.showJavalinBanner = false;
            cfg.jetty.port = 0;
            cfg.jetty.host = "127.0.0.1";
            cfg.jetty.threadPool = pool;
            cfg.routes.addHttpHandler(HandlerType.POST, "/app/installations/{id}/access_tokens", ctx -> answer(ctx,
                    201, "{\"token\":\"ghs_test_token\",\"expires_at\":\"" + Instant.now().plusSeconds(3600) + "\"}"));
            cfg.routes.addHttpHandler(HandlerType.POST, repo + "/issues/{issue}/comments", ctx -> {
                onComment.accept(Integer.parseInt(ctx.pathParam("issue")), ctx.body());
                answer(ctx, 201, "{\"id\": 777, \"body\": \"posted\"}");
            });
            cfg.routes.addHttpHandler(HandlerType.GET, repo + "/issues/{issue}/comments", ctx -> answer(ctx, 200, "[]"));
            cfg.routes.addHttpHandler(HandlerType.POST, repo + "/issues/comments/{comment}/reactions",
                    ctx -> answer(ctx, 201, "{\"id\":1,\"content\":\"+1\"}"));
            cfg.routes.addHttpHandler(HandlerType.POST, repo + "/issues/{issue}/reactions",
                    ctx -> answer(ctx, 201, "{\"id\":2,\"content\":\"+1\"}"));
            cfg.routes.addHttpHandler(HandlerType.POST, repo + "/issues/{issue}/labels", ctx -> answer(ctx, 200, "[]"));
            cfg.routes.addHttpHandler(HandlerType.DELETE, repo + "/issues/{issue}/labels/{label}",
                    ctx -> answer(ctx, 200, "[]"));
            cfg.routes.addHttpHandler(HandlerType.GET, repo + "/collaborators/{login}/permission", ctx -> {
                String login = ctx.pathParam("login");
                String permission = switch (login) {
                    case "boss" -> "admin";
                    case "writer" -> "write";
                    default -> "read";
                };
                answer(ctx, 200, "{\"permission\":\"" + permission + "\",\"user\":{\"login\":\""
                        + ("boss".equals(login) || "writer".equals(login) ? login : "someone") + "\"}}");
            });
            cfg.routes.addHttpHandler(HandlerType.GET, "/orgs/acme/teams/architects/members", ctx -> answer(ctx, 200,
                    "[{\"login\":\"team-arch\",\"id\":9}]"));
            // the repository has no .github/agentx.toml: GitHub's 404 for a missing file
            cfg.routes.addHttpHandler(HandlerType.GET, repo + "/contents/.github/agentx.toml",
                    ctx -> {
                        ctx.attribute(ANSWERED, true);
                        answer(ctx, 404, NOT_FOUND);
                    });
            cfg.routes.error(404, ctx -> {
                if (ctx.<Boolean>attribute(ANSWERED) == null) { // no route: a path the stub has no answer for
                    unanswered.computeIfAbsent(ctx.method() + " " + ctx.path(), k -> new LongAdder()).increment();
                    answer(ctx, 404, NOT_FOUND);
                }
            });
        }).start();
    }

    /** Set on a request a route answered 404, so the error handler leaves it as it is. */
    private static final String ANSWERED = "stub.answered";
    private static final String NOT_FOUND = "{\"message\":\"Not Found\",\"documentation_url\":"
            + "\"https://docs.github.com/rest\",\"status\":\"404\"}";

    /** GitHub's rate-limit headers on every answer, as the tests' WireMock adds them. */
    private static void answer(Context ctx, int status, String json) {
        ctx.status(status).contentType("application/json; charset=utf-8")
                .header("X-RateLimit-Limit", "5000").header("X-RateLimit-Remaining", "4999")
                .header("X-RateLimit-Used", "1")
                .header("X-RateLimit-Reset", String.valueOf(System.currentTimeMillis() / 1000 + 3600))
                .header("X-RateLimit-Resource", "core").result(json);
    }

    String baseUrl() {
        return "http://127.0.0.1:" + app.port();
    }

    /** The requests answered 404 for want of a stub, by method and path (empty: none). */
    Map<String, Long> unanswered() {
        Map<String, Long> out = new java.util.TreeMap<>();
        unanswered.forEach((k, v) -> out.put(k, v.sum()));
        return out;
    }

    @Override
    public void close() {
        app.stop();
    }
}
