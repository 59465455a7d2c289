package dev.agentx.clarify.http;

import io.javalin.config.JavalinConfig;

/**
 * Settings every HTTP server of ours starts with: the webhook server, the dashboards and the
 * setup page.
 *
 * <p>Jetty keeps a per-connection cache of header fields it parsed before and, by default,
 * matches a new field against it ignoring case: a {@code Cookie} header that differs from the
 * previous one on the same connection only in the case of its letters reads as the previous
 * one. Signed cookies and signatures are case-sensitive, so the cache must be too; otherwise a
 * tampered session cookie sent after the real one on a kept-alive connection would verify.
 */
public final class HttpServerDefaults {
    private HttpServerDefaults() {
    }

    public static void apply(JavalinConfig cfg) {
        cfg.startup.showJavalinBanner = false;
        cfg.startup.showOldJavalinVersionWarning = false;
        cfg.jetty.modifyHttpConfiguration(http -> http.setHeaderCacheCaseSensitive(true));
    }
}
