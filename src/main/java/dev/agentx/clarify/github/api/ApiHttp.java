package dev.agentx.clarify.github.api;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.io.entity.ByteArrayEntity;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.http.io.support.ClassicRequestBuilder;
import org.apache.hc.core5.util.TimeValue;
import org.apache.hc.core5.util.Timeout;

/**
 * The HTTP client of every GitHub API call the server makes (hub4j's and the gateway's own):
 * HTTP/1.1 over kept-alive connections, each request written and its answer read on the thread
 * that calls {@link #send}, with blocking sockets (Apache HttpClient's classic API). A sender or
 * a lane makes its call and has the answer without another thread in between; the JDK's
 * {@code java.net.http} client passes every exchange through its selector thread and its
 * executor, which cost the server about a millisecond of CPU and two dozen context switches per
 * delivery (three or four calls) for hand-offs alone.
 *
 * <p>The client never sends a request twice on its own: automatic retries are off, because a
 * POST whose answer was lost may have landed, and only the outbox knows to look for it before
 * it sends again. Redirects are followed (a renamed repository answers 301, or 307 to a write);
 * cookies and compression are off (GitHub's API sets none that matter; its answers are small).
 * A pooled connection unused for a second is checked before it is used, so one the server
 * closed meanwhile costs a new connection, not a failed call.
 */
final class ApiHttp implements AutoCloseable {
    /** An answer: its status, its headers (names in any case), its body. */
    record Answer(int status, Map<String, List<String>> headers, byte[] body) {
        /** The first value of header {@code name}, or null. */
        String header(String name) {
            List<String> values = headers.get(name);
            return values == null || values.isEmpty() ? null : values.get(0);
        }
    }

    /** Connections kept per host: more than the senders and lanes that call at once. */
    private static final int CONNECTIONS = 32;

    private final CloseableHttpClient client;

    /** {@code timeout}: how long to connect, and how long to wait for each part of the answer. */
    ApiHttp(Duration timeout) {
        Timeout t = Timeout.of(timeout);
        client = HttpClients.custom()
                .setConnectionManager(PoolingHttpClientConnectionManagerBuilder.create()
                        .setMaxConnTotal(CONNECTIONS).setMaxConnPerRoute(CONNECTIONS)
                        .setDefaultConnectionConfig(ConnectionConfig.custom().setConnectTimeout(t).setSocketTimeout(t)
                                .setValidateAfterInactivity(TimeValue.ofSeconds(1)).build())
                        .build())
                .setDefaultRequestConfig(RequestConfig.custom().setConnectionRequestTimeout(t).setResponseTimeout(t)
                        .build())
                .disableAutomaticRetries().disableCookieManagement().disableContentCompression()
                .setUserAgent("agentx-clarify")
                .build();
    }

    /**
     * Sends {@code method} to {@code uri} with {@code headers} and {@code body} (none when null;
     * {@code contentType} names it) and reads the whole answer.
     *
     * @throws IOException no answer: the connection failed, or a timeout passed
     */
    Answer send(String method, URI uri, Map<String, List<String>> headers, byte[] body, String contentType)
            throws IOException {
        ClassicRequestBuilder request = ClassicRequestBuilder.create(method).setUri(uri);
        headers.forEach((name, values) -> { // the body's length and type are the entity's
            if (values != null && !name.equalsIgnoreCase("Content-Length") && !name.equalsIgnoreCase("Content-Type")) {
                request.addHeader(name, String.join(",", values));
            }
        });
        if (body != null) {
            request.setEntity(new ByteArrayEntity(body, contentType == null ? null : ContentType.parse(contentType)));
        }
        return client.execute(request.build(), response -> {
            Map<String, List<String>> answerHeaders = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
            for (Header h : response.getHeaders()) {
                answerHeaders.computeIfAbsent(h.getName(), k -> new ArrayList<>(1)).add(h.getValue());
            }
            HttpEntity entity = response.getEntity();
            byte[] bytes = entity == null ? new byte[0] : EntityUtils.toByteArray(entity);
            return new Answer(response.getCode(), Collections.unmodifiableMap(answerHeaders), bytes);
        });
    }

    @Override
    public void close() throws IOException {
        client.close();
    }
}
