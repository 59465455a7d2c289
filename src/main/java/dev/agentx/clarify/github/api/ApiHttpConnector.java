package dev.agentx.clarify.github.api;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.util.Locale;
import org.kohsuke.github.connector.GitHubConnector;
import org.kohsuke.github.connector.GitHubConnectorRequest;
import org.kohsuke.github.connector.GitHubConnectorResponse;

/**
 * hub4j's connector over {@link ApiHttp}: hub4j's reads go out on the calling thread with the
 * client's timeouts (hub4j's own connectors set none, so a GitHub API that accepts the connection
 * and never answers would hold the worker, and with it every delivery, forever). A call that
 * gets no answer fails with no response, which the outbox treats as uncertain and retries after
 * checking for an earlier landing. hub4j itself never sends a request again (see {@link #send}).
 *
 * <p>Every request is reported to the {@link Observer} with its route ({@link ApiRoutes}) and
 * status, once its answer is in or it failed: hub4j may make several requests for one call of
 * the gateway (a token, pages of a list), and each is one GitHub API call.
 */
final class ApiHttpConnector implements GitHubConnector {
    /** Told of each request: its method, route, status (2xx, the HTTP status of a failure, or io_error) and start. */
    @FunctionalInterface
    interface Observer {
        void requested(String method, String route, String status, long startNanos);
    }

    private final ApiHttp http;
    private final String prefix;
    private final Observer observer;

    /** {@code apiPath}: the path of GITHUB_API_URL, cut off request paths to name their route. */
    ApiHttpConnector(ApiHttp http, String apiPath, Observer observer) {
        this.http = http;
        this.prefix = apiPath == null ? "" : apiPath.replaceAll("/+$", "");
        this.observer = observer;
    }

    @Override
    public GitHubConnectorResponse send(GitHubConnectorRequest request) throws IOException {
        java.net.URI uri;
        try {
            uri = request.url().toURI();
        } catch (URISyntaxException e) {
            throw new IOException("invalid URL " + request.url(), e);
        }
        byte[] body = null;
        if (request.hasBody()) {
            try (InputStream in = request.body()) {
                body = in.readAllBytes();
            }
        }
        String method = request.method().toUpperCase(Locale.ROOT);
        String route = ApiRoutes.of(prefix, request.url().getPath());
        long start = System.nanoTime();
        String status = "io_error";
        try {
            String type = request.contentType() != null ? request.contentType() : request.header("Content-Type");
            ApiHttp.Answer answer = http.send(method, uri, request.allHeaders(), body, type);
            status = answer.status() / 100 == 2 ? "2xx" : String.valueOf(answer.status());
            return new Response(request, answer);
        } catch (java.net.SocketException | java.net.SocketTimeoutException e) {
            // hub4j sends a request again, at least twice more, when it fails with one of these:
            // a timeout would then hold the caller three times over. Retrying is the callers' (the
            // outbox looks for an earlier landing first), so hub4j sees a plain I/O failure.
            throw new IOException("no answer from " + method + " " + route + ": " + e, e);
        } finally {
            observer.requested(method, route, status, start);
        }
    }

    private static final class Response extends GitHubConnectorResponse.ByteArrayResponse {
        private final byte[] body;

        Response(GitHubConnectorRequest request, ApiHttp.Answer answer) {
            super(request, answer.status(), answer.headers());
            this.body = answer.body();
        }

        @Override
        protected InputStream rawBodyStream() {
            return new ByteArrayInputStream(body);
        }
    }
}
