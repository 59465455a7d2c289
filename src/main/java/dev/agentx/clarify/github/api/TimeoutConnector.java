package dev.agentx.clarify.github.api;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.URISyntaxException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.kohsuke.github.connector.GitHubConnector;
import org.kohsuke.github.connector.GitHubConnectorRequest;
import org.kohsuke.github.connector.GitHubConnectorResponse;

/**
 * hub4j's connector over {@code java.net.http}, with timeouts. hub4j's own
 * {@code HttpClientGitHubConnector} sets none, so a GitHub API that accepts the connection and never
 * answers would hold the worker (and with it every delivery) forever. Here connecting and waiting
 * for the response headers each give up after {@code timeout}; the call then fails with no
 * response, which the outbox treats as uncertain and retries after checking for an earlier landing.
 *
 * <p>Every request is reported to the {@link Observer} with its route ({@link ApiRoutes}) and
 * status, once its response headers are in or it failed: hub4j may make several requests for one
 * call of the gateway (a token, pages of a list), and each is one GitHub API call.
 */
final class TimeoutConnector implements GitHubConnector {
    /** Told of each request: its method, route, status (2xx, the HTTP status of a failure, or io_error) and start. */
    @FunctionalInterface
    interface Observer {
        void requested(String method, String route, String status, long startNanos);
    }

    private final HttpClient http;
    private final Duration timeout;
    private final String prefix;
    private final Observer observer;

    /** {@code apiPath}: the path of GITHUB_API_URL, cut off request paths to name their route. */
    TimeoutConnector(Duration timeout, String apiPath, Observer observer) {
        this.timeout = timeout;
        this.prefix = apiPath == null ? "" : apiPath.replaceAll("/+$", "");
        this.observer = observer;
        this.http = HttpClient.newBuilder().connectTimeout(timeout).followRedirects(HttpClient.Redirect.NORMAL)
                .build();
    }

    @Override
    public GitHubConnectorResponse send(GitHubConnectorRequest request) throws IOException {
        HttpRequest.Builder b = HttpRequest.newBuilder().timeout(timeout);
        try {
            b.uri(request.url().toURI());
        } catch (URISyntaxException e) {
            throw new IOException("invalid URL " + request.url(), e);
        }
        for (Map.Entry<String, List<String>> h : request.allHeaders().entrySet()) {
            if (h.getValue() != null) {
                b.header(h.getKey(), String.join(",", h.getValue()));
            }
        }
        HttpRequest.BodyPublisher body = HttpRequest.BodyPublishers.noBody();
        if (request.hasBody()) {
            try (InputStream in = request.body()) {
                body = HttpRequest.BodyPublishers.ofByteArray(in.readAllBytes());
            }
        }
        b.method(request.method(), body);
        String method = request.method().toUpperCase(Locale.ROOT);
        String route = ApiRoutes.of(prefix, request.url().getPath());
        long start = System.nanoTime();
        String status = "io_error";
        try {
            HttpResponse<InputStream> response = http.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
            status = response.statusCode() / 100 == 2 ? "2xx" : String.valueOf(response.statusCode());
            return new Response(request, response);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            InterruptedIOException io = new InterruptedIOException(e.getMessage());
            io.initCause(e);
            throw io;
        } finally {
            observer.requested(method, route, status, start);
        }
    }

    private static final class Response extends GitHubConnectorResponse.ByteArrayResponse {
        private final HttpResponse<InputStream> response;

        Response(GitHubConnectorRequest request, HttpResponse<InputStream> response) {
            super(request, response.statusCode(), response.headers().map());
            this.response = response;
        }

        @Override
        protected InputStream rawBodyStream() {
            return response.body();
        }

        @Override
        public void close() throws IOException {
            super.close();
            response.body().close();
        }
    }
}
