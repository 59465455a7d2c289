package dev.agentx.clarify.channel;

import dev.agentx.clarify.config.AgentSettings;
import dev.agentx.clarify.lock.Sleeper;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

/**
 * {@code channel = "http"}: POSTs the request JSON to the role's {@code url} and reads the answer
 * from the JSON response ({@link AnswerParser}). With {@code secret_env} the body is signed
 * ({@link Signatures}); with {@code token_env} an {@code Authorization: Bearer} header is sent; both
 * variables are read when the question is asked. Each attempt may take {@code timeout_seconds}; a
 * 5xx answer or a refused connection is tried again up to {@code retries} times, waiting 0.5 s,
 * 1 s, 2 s ... (at most 10 s) between attempts. A timeout, a 4xx or a malformed body is not retried.
 */
public final class HttpChannel implements AnswerChannel {
    static final Duration FIRST_BACKOFF = Duration.ofMillis(500);
    static final Duration MAX_BACKOFF = Duration.ofSeconds(10);

    private final String role;
    private final AgentSettings settings;
    private final Map<String, String> env;
    private final RequestJson json;
    private final HttpClient client;
    private final Sleeper sleeper;

    public HttpChannel(String role, AgentSettings settings, Map<String, String> env, RequestJson json, Sleeper sleeper) {
        if (settings.url() == null || settings.url().isBlank()) {
            throw new IllegalArgumentException("[agents." + role + "] has channel = \"http\" but no url");
        }
        this.role = role;
        this.settings = settings;
        this.env = Map.copyOf(env);
        this.json = json;
        this.sleeper = sleeper;
        this.client = HttpClient.newBuilder()
                .connectTimeout(Duration.ofSeconds(Math.min(10, settings.timeoutSeconds())))
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
    }

    @Override
    public Delivery ask(QuestionRequest request) {
        String who = role + "'s http agent (" + settings.url() + ")";
        byte[] body = json.encode(request);
        HttpRequest.Builder builder;
        try {
            builder = HttpRequest.newBuilder(URI.create(settings.url()));
        } catch (IllegalArgumentException e) {
            return new Delivery.Failed("url of [agents." + role + "] is not a valid URL: " + e.getMessage());
        }
        builder.timeout(Duration.ofSeconds(settings.timeoutSeconds()))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json")
                .header("User-Agent", "agentx-clarify")
                .header("X-Agentx-Clarification", request.id())
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (settings.secretEnv() != null) {
            String secret = env.get(settings.secretEnv());
            if (secret == null || secret.isEmpty()) {
                return new Delivery.Failed("the environment variable " + settings.secretEnv()
                        + " (secret_env of [agents." + role + "]) is not set, so the request cannot be signed");
            }
            builder.header(Signatures.HEADER, Signatures.sign(secret, body));
        }
        if (settings.tokenEnv() != null) {
            String token = env.get(settings.tokenEnv());
            if (token == null || token.isEmpty()) {
                return new Delivery.Failed("the environment variable " + settings.tokenEnv()
                        + " (token_env of [agents." + role + "]) is not set");
            }
            builder.header("Authorization", "Bearer " + token);
        }
        HttpRequest httpRequest = builder.build();
        String lastError = null;
        int attempts = settings.retries() + 1;
        for (int attempt = 0; attempt < attempts; attempt++) {
            if (attempt > 0) {
                try {
                    sleeper.sleep(backoff(attempt));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return new Delivery.Failed(who + ": interrupted while waiting to retry after " + lastError);
                }
            }
            try {
                HttpResponse<InputStream> response = client.send(httpRequest, HttpResponse.BodyHandlers.ofInputStream());
                String text;
                try (InputStream in = response.body()) {
                    byte[] bytes = in.readNBytes(settings.maxOutputBytes() + 1);
                    if (bytes.length > settings.maxOutputBytes()) {
                        return new Delivery.Failed(who + " sent more than " + settings.maxOutputBytes()
                                + " bytes (max_output_bytes)");
                    }
                    text = new String(bytes, StandardCharsets.UTF_8);
                }
                int status = response.statusCode();
                if (status >= 200 && status < 300) {
                    return AnswerParser.parse(text, true, request.options(), who, "http");
                }
                lastError = "HTTP " + status + (text.isBlank() ? "" : ": " + AnswerParser.snippet(text));
                if (status < 500) {
                    return new Delivery.Failed(who + " answered " + lastError);
                }
            } catch (HttpTimeoutException e) {
                return new Delivery.Failed(who + " gave no answer within " + settings.timeoutSeconds()
                        + " s (timeout_seconds)");
            } catch (IOException e) {
                lastError = describe(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return new Delivery.Failed(who + " was interrupted");
            }
        }
        return new Delivery.Failed(who + " failed " + attempts + (attempts == 1 ? " time" : " times") + "; last: "
                + lastError);
    }

    /**
     * A connection's failure with its causes, innermost last: the JDK's client reports a host name
     * that does not resolve as a bare ConnectException around an UnresolvedAddressException.
     */
    static String describe(Throwable e) {
        StringBuilder b = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            b.append(b.isEmpty() ? "" : " <- ").append(t instanceof java.nio.channels.UnresolvedAddressException
                    ? "the host name does not resolve" : t.getClass().getSimpleName()
                    + (t.getMessage() == null ? "" : ": " + t.getMessage()));
        }
        return b.toString();
    }

    /** The wait before attempt {@code n} (1-based retry number). */
    static Duration backoff(int n) {
        Duration d = FIRST_BACKOFF.multipliedBy(1L << Math.min(n - 1, 10));
        return d.compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : d;
    }
}
