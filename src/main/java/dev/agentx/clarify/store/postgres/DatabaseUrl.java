package dev.agentx.clarify.store.postgres;

import dev.agentx.clarify.config.UnreadableFile;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Where the PostgreSQL store is: {@code AGENTX_DATABASE_URL} or {@code --database-url}, as
 * {@code postgresql://user:pass@host:5432/db?sslmode=require} (also {@code postgres://}, the form
 * most hosted databases hand out) or as a JDBC URL {@code jdbc:postgresql://host:5432/db?user=...}.
 * The password may instead come from the file {@code AGENTX_DATABASE_PASSWORD_FILE} names (a
 * mounted secret); a password in the URL wins. {@link #toString()} never shows the password.
 *
 * @param jdbcUrl  the driver's URL, without user and password
 * @param user     null: the URL's own or the driver's default
 * @param password null: none given
 */
public record DatabaseUrl(String jdbcUrl, String user, String password) {
    public static final String ENV = "AGENTX_DATABASE_URL";
    public static final String PASSWORD_FILE_ENV = "AGENTX_DATABASE_PASSWORD_FILE";

    /** Whether {@code text} is a database URL this store takes (rather than, say, a folder). */
    public static boolean looksLikeOne(String text) {
        return text != null && (text.startsWith("postgresql://") || text.startsWith("postgres://")
                || text.startsWith("jdbc:postgresql:"));
    }

    /** The URL from the environment, or null when {@code AGENTX_DATABASE_URL} is unset or blank. */
    public static DatabaseUrl fromEnv(Map<String, String> env) {
        String url = env.get(ENV);
        if (url == null || url.isBlank()) {
            return null;
        }
        return parse(url.strip(), env);
    }

    /**
     * Parses a URL; the password file of {@code env} applies when the URL carries no password.
     *
     * @throws IllegalArgumentException saying what is wrong and what a good URL looks like
     */
    public static DatabaseUrl parse(String url, Map<String, String> env) {
        DatabaseUrl parsed;
        if (url.startsWith("jdbc:postgresql:")) {
            parsed = new DatabaseUrl(url, null, null);
        } else if (url.startsWith("postgresql://") || url.startsWith("postgres://")) {
            parsed = fromUri(url);
        } else {
            throw new IllegalArgumentException("'" + redact(url) + "' is not a PostgreSQL URL: give "
                    + "postgresql://USER:PASSWORD@HOST:5432/DATABASE or jdbc:postgresql://HOST:5432/DATABASE");
        }
        String file = env.get(PASSWORD_FILE_ENV);
        if (parsed.password == null && file != null && !file.isBlank()) {
            try {
                String secret = Files.readString(Path.of(file.strip()), StandardCharsets.UTF_8);
                parsed = new DatabaseUrl(parsed.jdbcUrl, parsed.user, secret.strip());
            } catch (IOException e) {
                throw new IllegalArgumentException(PASSWORD_FILE_ENV + ": "
                        + UnreadableFile.explain(Path.of(file.strip()), e), e);
            }
        }
        return parsed;
    }

    private static DatabaseUrl fromUri(String url) {
        String rest = url.substring(url.indexOf("://") + 3);
        String user = null;
        String password = null;
        int at = rest.lastIndexOf('@', rest.indexOf('/') < 0 ? rest.length() : rest.indexOf('/'));
        if (at >= 0) {
            String info = rest.substring(0, at);
            rest = rest.substring(at + 1);
            int colon = info.indexOf(':');
            user = decode(colon < 0 ? info : info.substring(0, colon));
            password = colon < 0 ? null : decode(info.substring(colon + 1));
        }
        int slash = rest.indexOf('/');
        String hostPort = slash < 0 ? rest : rest.substring(0, slash);
        String path = slash < 0 ? "" : rest.substring(slash + 1);
        if (hostPort.isEmpty()) {
            throw new IllegalArgumentException("'" + redact(url) + "' names no host: give "
                    + "postgresql://USER:PASSWORD@HOST:5432/DATABASE");
        }
        for (String host : hostPort.split(",")) {
            int colon = host.lastIndexOf(':');
            String port = colon < 0 || colon < host.lastIndexOf(']') ? null : host.substring(colon + 1);
            if (port != null && !(port.matches("\\d{1,5}") && Integer.parseInt(port) >= 1
                    && Integer.parseInt(port) <= 65535)) {
                throw new IllegalArgumentException("'" + redact(url) + "' has the port '" + port + "': give a number "
                        + "from 1 to 65535, as in postgresql://USER:PASSWORD@HOST:5432/DATABASE");
            }
        }
        String database = path;
        String query = "";
        int q = path.indexOf('?');
        if (q >= 0) {
            database = path.substring(0, q);
            query = path.substring(q);
        }
        if (database.isEmpty()) {
            throw new IllegalArgumentException("'" + redact(url) + "' names no database: give "
                    + "postgresql://USER:PASSWORD@HOST:5432/DATABASE");
        }
        return new DatabaseUrl("jdbc:postgresql://" + hostPort + "/" + database + query,
                user == null || user.isEmpty() ? null : user, password == null || password.isEmpty() ? null : password);
    }

    private static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    /** The URL with any password replaced by {@code ***}. */
    /** Whether a password goes with the URL: given apart, or as the URL's {@code password} parameter. */
    public boolean hasPassword() {
        return password != null || java.util.regex.Pattern.compile("(?i)[?&]password=[^&]").matcher(jdbcUrl).find();
    }

    public static String redact(String url) {
        String out = url.replaceAll("(://[^:/@]*:)[^@/]*@", "$1***@");
        return out.replaceAll("(?i)([?&]password=)[^&]*", "$1***");
    }

    /** The URL for messages: the driver's URL with the user, never the password. */
    @Override
    public String toString() {
        return redact(jdbcUrl) + (user == null ? "" : " as " + user);
    }
}
