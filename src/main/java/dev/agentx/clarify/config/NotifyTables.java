package dev.agentx.clarify.config;

import dev.agentx.clarify.http.PublicAddress;
import dev.agentx.clarify.protocol.Roles;
import dev.agentx.clarify.toml.TomlFile;
import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.tomlj.TomlArray;
import org.tomlj.TomlTable;

/**
 * {@code [[notify]]}: the receivers of notifications ({@link NotifyReceiver}), read strictly (file,
 * line and key in every error). The server's {@code agentx.toml} may set every key; a
 * repository's {@code .github/agentx.toml} may add receivers for its own events but may neither
 * set {@code allow_private} (whoever can push to it could otherwise make the server call its own
 * network) nor {@code secret_file} (nor read the server's files). A URL whose host is an IP address
 * that is not public is refused here already, unless the server's table allows private addresses;
 * a name is checked on the address it resolves to, each time a notification is sent.
 */
public final class NotifyTables {
    private static final Set<String> KEYS = Set.of("url", "secret", "secret_file", "events", "roles", "format",
            "allow_private");
    private static final String ROLE = "[A-Za-z0-9][A-Za-z0-9_.-]*";

    private NotifyTables() {
    }

    /**
     * The file's {@code [[notify]]} tables, as the server's config ({@code origin} {@link
     * NotifyReceiver#SERVER}; {@code base}: the folder a relative {@code secret_file} is in) or as
     * the repository {@code origin}'s (then {@code base} is unused).
     */
    public static List<NotifyReceiver> read(TomlFile toml, TomlTable root, String origin, Path base) {
        List<NotifyReceiver> out = new ArrayList<>();
        if (!root.contains("notify")) {
            return out;
        }
        Object v = root.get("notify");
        if (!(v instanceof TomlArray array) || (!array.isEmpty() && !(array.get(0) instanceof TomlTable))) {
            throw toml.error(root, "notify", "must be written as [[notify]] tables (one per receiver), got "
                    + TomlFile.typeName(v));
        }
        boolean server = NotifyReceiver.SERVER.equals(origin);
        TomlFile scoped = toml.scoped("notify.");
        for (int i = 0; i < array.size(); i++) {
            TomlTable t = array.getTable(i);
            String where = "[[notify]] table " + (i + 1);
            if (!server) {
                refuseServerKeys(scoped, t);
            }
            scoped.onlyKeys(t, where, KEYS);
            out.add(receiver(toml, scoped, t, where, origin, base, server));
        }
        return out;
    }

    private static void refuseServerKeys(TomlFile scoped, TomlTable t) {
        if (t.contains("allow_private")) {
            throw scoped.error(t, "allow_private", "is server configuration: anyone who can push to the repository "
                    + "could otherwise make the server send requests into its own network (its host, its cloud's "
                    + "metadata service); the server's operator sets it in $AGENTX_DATA_DIR/agentx.toml");
        }
        if (t.contains("secret_file")) {
            throw scoped.error(t, "secret_file", "is server configuration: a repository's file cannot have the "
                    + "server read its files; write the receiver's secret as secret = \"...\" (it is then as "
                    + "readable as this file), or ask the server's operator for a receiver of their own");
        }
    }

    private static NotifyReceiver receiver(TomlFile toml, TomlFile scoped, TomlTable t, String where, String origin,
                                           Path base, boolean server) {
        String url = scoped.requiredString(t, "url", where).strip();
        Boolean allow = scoped.bool(t, "allow_private");
        boolean allowPrivate = server && Boolean.TRUE.equals(allow);
        checkUrl(scoped, t, url, allowPrivate, server);
        if (t.contains("secret") && t.contains("secret_file")) {
            throw scoped.error(t, "secret_file", "and secret are both set in " + where + "; keep one of the two");
        }
        String secret = null;
        if (t.contains("secret")) {
            secret = scoped.string(t, "secret", null);
            if (secret.isEmpty()) {
                throw scoped.error(t, "secret", "must not be empty (leave it out to send unsigned notifications)");
            }
        } else if (t.contains("secret_file")) {
            secret = secretFile(scoped, t, base);
        }
        Set<String> events = events(scoped, t);
        Set<String> roles = new LinkedHashSet<>();
        List<String> listed = scoped.strings(t, "roles");
        if (listed != null) {
            for (String r : listed) {
                if (!r.strip().matches(ROLE)) {
                    throw scoped.error(t, "roles", "must list role names (letters, digits, '.', '_', '-'), got '"
                            + WakeTable.printable(r) + "'");
                }
                roles.add(Roles.canonical(r));
            }
            if (roles.isEmpty()) {
                throw scoped.error(t, "roles", "lists no role: leave it out for every role");
            }
        }
        String format = scoped.string(t, "format", NotifyReceiver.JSON);
        if (!format.equals(NotifyReceiver.JSON) && !format.equals(NotifyReceiver.SLACK)) {
            throw scoped.error(t, "format", "must be json or slack, got '" + WakeTable.printable(format) + "'");
        }
        return new NotifyReceiver(url, secret, events, roles, format, allowPrivate, origin);
    }

    private static void checkUrl(TomlFile scoped, TomlTable t, String url, boolean allowPrivate, boolean server) {
        URI u;
        try {
            u = new URI(url);
        } catch (URISyntaxException e) {
            throw scoped.error(t, "url", "is not a URL: " + e.getReason());
        }
        String scheme = u.getScheme() == null ? "" : u.getScheme().toLowerCase(java.util.Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https")) {
            throw scoped.error(t, "url", "must start with https:// or http://");
        }
        if (u.getHost() == null || u.getHost().isEmpty()) {
            throw scoped.error(t, "url", "names no host");
        }
        if (u.getRawUserInfo() != null) {
            throw scoped.error(t, "url", "carries a user name or password; a receiver authenticates the server by "
                    + "the signature (secret), not by credentials in the URL");
        }
        if (u.getRawFragment() != null) {
            throw scoped.error(t, "url", "has a #fragment, which is never sent; leave it out");
        }
        if (allowPrivate) {
            return;
        }
        Optional<InetAddress> literal = PublicAddress.literal(u.getHost());
        if (literal.isPresent()) {
            Optional<String> why = PublicAddress.refusal(literal.get());
            if (why.isPresent()) {
                throw scoped.error(t, "url", "names " + literal.get().getHostAddress() + ", " + why.get()
                        + ", which the server never calls for "
                        + (server ? "a receiver without allow_private = true" : "a repository's receiver (no "
                        + "request forgery into the server's own network)"));
            }
        }
    }

    private static Set<String> events(TomlFile scoped, TomlTable t) {
        List<String> listed = scoped.strings(t, "events");
        if (listed == null) {
            return new LinkedHashSet<>(NotifyReceiver.EVENTS);
        }
        Set<String> events = new LinkedHashSet<>();
        for (String e : listed) {
            if (!NotifyReceiver.EVENTS.contains(e)) {
                throw scoped.error(t, "events", "names '" + WakeTable.printable(e) + "', which is no event; events: "
                        + String.join(", ", NotifyReceiver.EVENTS));
            }
            events.add(e);
        }
        if (events.isEmpty()) {
            throw scoped.error(t, "events", "lists no event: leave it out for every event ("
                    + String.join(", ", NotifyReceiver.EVENTS) + ")");
        }
        return events;
    }

    private static String secretFile(TomlFile scoped, TomlTable t, Path base) {
        String name = scoped.string(t, "secret_file", null);
        if (name.isBlank()) {
            throw scoped.error(t, "secret_file", "must name a file");
        }
        Path file = base == null ? Path.of(name) : base.resolve(name);
        String secret;
        try {
            secret = Files.readString(file, StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            throw scoped.error(t, "secret_file", "cannot be read: " + UnreadableFile.explain(file, e));
        }
        if (secret.isEmpty()) {
            throw scoped.error(t, "secret_file", "names " + file + ", which is empty");
        }
        return secret;
    }
}
