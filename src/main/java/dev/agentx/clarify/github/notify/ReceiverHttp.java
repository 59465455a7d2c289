package dev.agentx.clarify.github.notify;

import dev.agentx.clarify.http.PublicAddress;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.HttpHost;
import org.apache.hc.core5.http.io.entity.ByteArrayEntity;
import org.apache.hc.core5.net.URIAuthority;
import org.apache.hc.core5.util.TimeValue;
import org.apache.hc.core5.util.Timeout;

/**
 * The HTTP client of notifications: one POST per attempt to a receiver's URL, on the calling
 * thread. The receiver's host is resolved here, once per attempt; unless the receiver's table
 * allows private addresses, every address the name resolves to must be public ({@link
 * PublicAddress}: no loopback, private, link-local or metadata address, in none of its IPv6
 * disguises), and the connection is made to that very address ({@link HttpHost} carrying it, the
 * name only for the {@code Host} header and TLS), so no second lookup can point it elsewhere
 * (DNS rebinding). The client's own resolver refuses every name, so nothing else can be looked up.
 * Redirects are not followed, nothing is retried by the client, no cookies are kept. Short
 * timeouts: connecting, waiting for each read, and the whole exchange, after which it is cut;
 * of the answer only the status, {@code Retry-After} and the first bytes of the body are read, and
 * the connection is then dropped (never drained of a long body, never kept).
 */
public final class ReceiverHttp implements AutoCloseable {
    /** Connecting. */
    public static final Duration CONNECT = Duration.ofSeconds(5);
    /** Waiting for each read of the answer. */
    public static final Duration READ = Duration.ofSeconds(10);
    /** The whole exchange. */
    public static final Duration TOTAL = Duration.ofSeconds(30);
    /** Of an answer's body, at most this much is read (for the failure's message). */
    private static final int BODY_KEPT = 512;

    /** Resolves a host name to its addresses (DNS; tests put their own). */
    @FunctionalInterface
    public interface Resolver {
        InetAddress[] resolve(String host) throws UnknownHostException;
    }

    /** The receiver's answer: its status, its {@code Retry-After} (or null), the start of its body. */
    public record Answer(int status, String retryAfter, String body) {
    }

    /** The receiver's address is not public and its table does not allow private ones: nothing was sent. */
    public static final class Refused extends IOException {
        public Refused(String message) {
            super(message);
        }
    }

    private final CloseableHttpClient client;
    private final Resolver resolver;
    private final Duration total;

    public ReceiverHttp(Duration connect, Duration read, Duration total, Resolver resolver) {
        this.resolver = resolver;
        this.total = total;
        this.client = HttpClients.custom()
                .setConnectionManager(PoolingHttpClientConnectionManagerBuilder.create()
                        .setMaxConnTotal(64).setMaxConnPerRoute(4)
                        .setDnsResolver(new org.apache.hc.client5.http.DnsResolver() {
                            @Override
                            public InetAddress[] resolve(String host) throws UnknownHostException {
                                throw new UnknownHostException("notifications connect only to an address checked "
                                        + "beforehand, never to a name: " + host);
                            }

                            @Override
                            public String resolveCanonicalHostname(String host) throws UnknownHostException {
                                throw new UnknownHostException(host);
                            }
                        })
                        .setDefaultConnectionConfig(ConnectionConfig.custom().setConnectTimeout(Timeout.of(connect))
                                .setSocketTimeout(Timeout.of(read)).setTimeToLive(TimeValue.ofMinutes(1))
                                .setValidateAfterInactivity(TimeValue.ofSeconds(1)).build())
                        .build())
                .setDefaultRequestConfig(RequestConfig.custom().setConnectionRequestTimeout(Timeout.of(connect))
                        .setResponseTimeout(Timeout.of(read)).setRedirectsEnabled(false).build())
                .disableRedirectHandling().disableAutomaticRetries().disableCookieManagement()
                .disableContentCompression().disableAuthCaching().setUserAgent("agentx-clarify")
                .build();
    }

    /** Cuts exchanges at their deadline: one thread for every client of the process, made at first use. */
    private static final class Cutter {
        static final ScheduledExecutorService THREAD = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "agentx-notify-deadline");
            t.setDaemon(true);
            return t;
        });
    }

    /** The server's client: {@link #CONNECT}, {@link #READ}, {@link #TOTAL}, the system's DNS. */
    public static ReceiverHttp standard() {
        return new ReceiverHttp(CONNECT, READ, TOTAL, InetAddress::getAllByName);
    }

    /**
     * POSTs {@code body} (JSON) with {@code headers} to {@code url}.
     *
     * @throws Refused the address the host resolves to is not public, and {@code allowPrivate} is not set
     * @throws IOException no answer: the name did not resolve, the connection failed, a timeout passed
     */
    public Answer post(String url, boolean allowPrivate, Map<String, String> headers, byte[] body) throws IOException {
        URI uri;
        try {
            uri = URI.create(url);
        } catch (IllegalArgumentException e) {
            throw new Refused("the receiver's URL is not valid");
        }
        String host = uri.getHost();
        if (host == null) {
            throw new Refused("the receiver's URL names no host");
        }
        String name = host.startsWith("[") ? host.substring(1, host.length() - 1) : host;
        InetAddress address = checked(name, allowPrivate);
        String scheme = uri.getScheme().toLowerCase(java.util.Locale.ROOT);
        int port = uri.getPort() > 0 ? uri.getPort() : scheme.equals("https") ? 443 : 80;
        HttpHost target = new HttpHost(scheme, address, name, port);
        String path = (uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath())
                + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
        HttpPost post = new HttpPost(path);
        post.setScheme(scheme);
        post.setAuthority(new URIAuthority(name, uri.getPort()));
        headers.forEach(post::addHeader);
        post.setEntity(new ByteArrayEntity(body, ContentType.APPLICATION_JSON));
        ScheduledFuture<?> cut = Cutter.THREAD.schedule(post::cancel, total.toMillis(), TimeUnit.MILLISECONDS);
        try (ClassicHttpResponse response = client.executeOpen(target, post, null)) {
            Header retry = response.getFirstHeader("Retry-After");
            int code = response.getCode();
            // a success's body is not needed; a failure's start says why (when it comes in time)
            Answer answer = new Answer(code, retry == null ? null : retry.getValue(),
                    code >= 200 && code < 300 ? "" : start(response.getEntity()));
            post.cancel(); // the rest of the body is not read: the connection is dropped, not drained
            return answer;
        } catch (IOException | RuntimeException e) {
            if (post.isCancelled()) {
                throw new java.io.InterruptedIOException("no whole answer within " + total.toSeconds() + " s");
            }
            throw e;
        } finally {
            cut.cancel(false);
        }
    }

    /** Resolves {@code name} and picks the address to connect to, refusing any that is not public unless allowed. */
    private InetAddress checked(String name, boolean allowPrivate) throws IOException {
        InetAddress[] all = resolver.resolve(name);
        if (all == null || all.length == 0) {
            throw new UnknownHostException(name + " resolves to no address");
        }
        if (!allowPrivate) {
            for (InetAddress a : all) {
                Optional<String> why = PublicAddress.refusal(a);
                if (why.isPresent()) {
                    throw new Refused("the receiver's host resolves to " + a.getHostAddress() + ", " + why.get()
                            + "; only the server's own agentx.toml may allow that (allow_private = true)");
                }
            }
        }
        return all[0];
    }

    /** The first bytes of an answer's body, as one line of printable text; the stream is left to the exchange's end. */
    private static String start(HttpEntity entity) {
        if (entity == null) {
            return "";
        }
        try {
            InputStream in = entity.getContent();
            byte[] b = in.readNBytes(BODY_KEPT);
            return new String(b, StandardCharsets.UTF_8).replaceAll("[\\p{Cntrl}]+", " ").strip();
        } catch (IOException e) {
            return ""; // the status says enough
        }
    }

    @Override
    public void close() throws IOException {
        client.close();
    }
}
