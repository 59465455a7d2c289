package dev.agentx.clarify.config;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;

/**
 * One {@code [[notify]]} table: where the server POSTs a notification of the clarifications'
 * events (docs/notifications.md).
 *
 * @param url          the receiver (http or https)
 * @param secret       the HMAC-SHA256 key of {@code X-AgentX-Signature-256}; null: not signed
 * @param events       the events sent ({@link #EVENTS}); never empty
 * @param roles        only clarifications from or to one of these roles; empty: all
 * @param format       {@code json} or {@code slack}
 * @param allowPrivate the server's own config let this receiver be on a private, loopback or
 *                     link-local address; never set from a repository's file
 * @param origin       {@code server}, or the repository ({@code owner/name}) whose
 *                     {@code .github/agentx.toml} added it: it gets that repository's events only
 */
public record NotifyReceiver(String url, String secret, Set<String> events, Set<String> roles, String format,
                             boolean allowPrivate, String origin) {
    /** The events a receiver may ask for, in the order they happen to a clarification. */
    public static final List<String> EVENTS = List.of("asked", "answered", "stale", "escalated", "resolved",
            "abandoned");
    public static final String JSON = "json";
    public static final String SLACK = "slack";
    public static final String SERVER = "server";

    public NotifyReceiver {
        events = Set.copyOf(events);
        roles = Set.copyOf(roles);
    }

    /**
     * The receiver's name: 12 hex digits of a hash of its origin and URL. Its notifications go out
     * in a line of their own, in order, under this name; the same table gets the same name across
     * restarts and replicas.
     */
    public String id() {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest((origin + "\n" + url)
                    .getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d, 0, 6);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The receiver as logs and listings show it: scheme, host and port, without the path and
     * query, which may be a secret of their own (a Slack webhook's URL is its credential).
     */
    public String shown() {
        return shown(url);
    }

    /** {@code url} without its path and query, as {@link #shown()}. */
    public static String shown(String url) {
        try {
            URI u = URI.create(url);
            return u.getScheme() + "://" + u.getHost() + (u.getPort() < 0 ? "" : ":" + u.getPort());
        } catch (IllegalArgumentException e) {
            return "(an invalid URL)";
        }
    }

    /** Whether a clarification from {@code from} to {@code to} reaching {@code event} is sent here. */
    public boolean wants(String event, String from, String to) {
        return events.contains(event) && (roles.isEmpty() || roles.contains(from) || roles.contains(to));
    }

    /** Never the secret, nor the URL's path. */
    @Override
    public String toString() {
        return "NotifyReceiver[" + shown() + " (" + id() + "), events=" + events + ", roles=" + roles + ", format="
                + format + ", signed=" + (secret != null) + ", allowPrivate=" + allowPrivate + ", origin=" + origin
                + "]";
    }
}
