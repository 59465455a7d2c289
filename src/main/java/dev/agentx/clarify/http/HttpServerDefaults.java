package dev.agentx.clarify.http;

import io.javalin.config.JavalinConfig;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.component.LifeCycle;

/**
 * Settings every HTTP server of ours starts with: the webhook server, the dashboards and the
 * setup page.
 *
 * <p>Jetty keeps a per-connection cache of header fields it parsed before and, by default,
 * matches a new field against it ignoring case: a {@code Cookie} header that differs from the
 * previous one on the same connection only in the case of its letters reads as the previous
 * one. Signed cookies and signatures are case-sensitive, so the cache must be too; otherwise a
 * tampered session cookie sent after the real one on a kept-alive connection would verify.
 *
 * <p>A path that exists answers a method it does not take with {@code 405} and {@code Allow}
 * ({@link MethodNotAllowed}), from the router's own list of the path's methods, so no server
 * lists its paths a second time to refuse the other methods.
 *
 * <p>The listening socket's queue of connections the kernel has completed and Jetty's acceptor
 * thread has not taken yet holds {@link #ACCEPT_QUEUE} (the kernel caps it at {@code
 * net.core.somaxconn}), not the JDK's default of 50: when many clients connect at once (a
 * thousand agents opening their {@code /mcp} calls, a burst of webhook deliveries) while the
 * acceptor waits for a core, a full queue drops connections the clients believe open, and they
 * end in a reset.
 */
public final class HttpServerDefaults {
    /** Connections the kernel holds for Jetty's acceptor to take. */
    public static final int ACCEPT_QUEUE = 1024;

    private HttpServerDefaults() {
    }

    public static void apply(JavalinConfig cfg) {
        cfg.startup.showJavalinBanner = false;
        cfg.startup.showOldJavalinVersionWarning = false;
        cfg.jetty.modifyHttpConfiguration(http -> http.setHeaderCacheCaseSensitive(true));
        // Javalin makes its connector just before the server starts; the queue is set as it starts
        cfg.jetty.modifyServer(server -> server.addEventListener(new LifeCycle.Listener() {
            @Override
            public void lifeCycleStarting(LifeCycle event) {
                for (Connector c : server.getConnectors()) {
                    if (c instanceof ServerConnector sc) {
                        sc.setAcceptQueueSize(ACCEPT_QUEUE);
                    }
                }
            }
        }));
        // a path that exists answers another method with 405 and the methods it takes, not 404
        cfg.http.prefer405over404 = true;
        cfg.routes.exception(io.javalin.http.MethodNotAllowedResponse.class, (e, ctx) ->
                MethodNotAllowed.answer(ctx, e.getDetails().values().stream().findFirst().orElse("")));
    }
}
