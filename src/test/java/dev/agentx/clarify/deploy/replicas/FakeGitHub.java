package dev.agentx.clarify.deploy.replicas;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The GitHub the replicas under check talk to, on this machine: what the App calls on GitHub for
 * the check's deliveries, an installation token, issue comments (listed back as posted, as GitHub
 * does, for the App's look-up after a crash), reactions, labels, a collaborator's permission, the
 * repository's optional config file and the App's delivery list for the recovery pass. Anything
 * else is answered 404 and reported. It counts the questions posted on each issue.
 */
final class FakeGitHub {
    final List<String[]> posted = new CopyOnWriteArrayList<>(); // {issue, body}
    final Map<Integer, List<String>> comments = new ConcurrentHashMap<>();
    final Map<String, Integer> unknown = new ConcurrentHashMap<>();
    final AtomicLong ids = new AtomicLong(5_000);
    final String repo;
    HttpServer server;

    FakeGitHub(String repo) {
        this.repo = repo;
    }

    int start() throws IOException {
        server = HttpServer.create(new InetSocketAddress("0.0.0.0", 0), 64);
        server.setExecutor(Executors.newFixedThreadPool(8));
        server.createContext("/", this::handle);
        server.start();
        return server.getAddress().getPort();
    }

    void stop() {
        if (server != null) {
            server.stop(0);
            ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
        }
    }

    int commentedIssues() {
        return (int) comments.values().stream().filter(l -> l.stream().anyMatch(FakeGitHub::isQuestion)).count();
    }

    long questionComments(int issue) {
        return comments.getOrDefault(issue, List.of()).stream().filter(FakeGitHub::isQuestion).count();
    }

    void handle(HttpExchange x) throws IOException {
        String method = x.getRequestMethod();
        String path = x.getRequestURI().getPath();
        String body;
        try (InputStream in = x.getRequestBody()) {
            body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        String repo = "/repos/" + this.repo;
        Matcher comment = Pattern.compile(Pattern.quote(repo) + "/issues/(\\d+)/comments").matcher(path);
        if (method.equals("POST") && path.matches("/app/installations/\\d+/access_tokens")) {
            answer(x, 201, "{\"token\":\"ghs_check\",\"expires_at\":\"" + Instant.now().plusSeconds(3600) + "\"}");
        } else if (comment.matches() && method.equals("POST")) {
            int issue = Integer.parseInt(comment.group(1));
            String text = JsonText.stringField(body, "body");
            long id = ids.incrementAndGet();
            posted.add(new String[] {String.valueOf(issue), text});
            comments.computeIfAbsent(issue, k -> new CopyOnWriteArrayList<>()).add(text);
            answer(x, 201, commentJson(id, text));
        } else if (comment.matches() && method.equals("GET")) {
            int issue = Integer.parseInt(comment.group(1));
            StringBuilder list = new StringBuilder("[");
            long id = 1;
            for (String text : comments.getOrDefault(issue, List.of())) {
                list.append(list.length() > 1 ? "," : "").append(commentJson(id++, text));
            }
            answer(x, 200, list.append(']').toString());
        } else if (method.equals("POST") && path.endsWith("/reactions")) {
            answer(x, 201, "{\"id\":1,\"content\":\"eyes\"}");
        } else if (path.startsWith(repo + "/issues/") && path.contains("/labels")) {
            answer(x, 200, "[]");
        } else if (method.equals("GET") && path.matches(Pattern.quote(repo) + "/collaborators/[^/]+/permission")) {
            String login = path.replaceAll(".*/collaborators/([^/]+)/permission", "$1");
            answer(x, 200, "{\"permission\":\"read\",\"user\":{\"login\":" + JsonText.string(login) + "}}");
        } else if (method.equals("GET") && path.equals("/app/hook/deliveries")) {
            answer(x, 200, "[]");
        } else {
            if (!path.startsWith(repo + "/contents/")) { // a missing config file is GitHub's 404 too
                unknown.merge(method + " " + path, 1, Integer::sum);
            }
            answer(x, 404, "{\"message\":\"Not Found\"}");
        }
    }

    static String commentJson(long id, String text) {
        return "{\"id\":" + id + ",\"body\":" + JsonText.string(text) + ",\"user\":{\"login\":\"agentx-clarify[bot]\","
                + "\"type\":\"Bot\"},\"created_at\":\"" + Instant.now().toString().replaceAll("\\.\\d+", "") + "\"}";
    }

    static void answer(HttpExchange x, int status, String json) throws IOException {
        byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
        x.getResponseHeaders().set("Content-Type", "application/json; charset=utf-8");
        x.getResponseHeaders().set("X-RateLimit-Limit", "5000");
        x.getResponseHeaders().set("X-RateLimit-Remaining", "4999");
        x.getResponseHeaders().set("X-RateLimit-Reset", String.valueOf(Instant.now().getEpochSecond() + 3600));
        x.getResponseHeaders().set("X-RateLimit-Resource", "core");
        x.sendResponseHeaders(status, bytes.length);
        x.getResponseBody().write(bytes);
        x.close();
    }

    /** Whether a comment is the App's post of a question. */
    static boolean isQuestion(String commentBody) {
        return commentBody.contains("**Clarification CLR-");
    }
}
