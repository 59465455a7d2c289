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
 */
final class TimeoutConnector implements GitHubConnector {
    private final HttpClient http;
    private final Duration timeout;

    TimeoutConnector(Duration timeout) {
        this.timeout = timeout;
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
        try {
            return new Response(request, http.send(b.build(), HttpResponse.BodyHandlers.ofInputStream()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            InterruptedIOException io = new InterruptedIOException(e.getMessage());
            io.initCause(e);
            throw io;
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
