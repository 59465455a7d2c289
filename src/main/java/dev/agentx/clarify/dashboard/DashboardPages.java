package dev.agentx.clarify.dashboard;

import gg.jte.ContentType;
import gg.jte.TemplateEngine;
import gg.jte.output.StringOutput;
import io.javalin.http.Context;
import io.javalin.http.sse.SseClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What both dashboards answer with: the page and its live part rendered from the jte templates,
 * the two assets, the security headers, and a feed of change events for the open pages.
 */
public final class DashboardPages {
    private static final Map<String, String> ASSETS = Map.of("dashboard.css", "text/css; charset=utf-8",
            "dashboard.js", "text/javascript; charset=utf-8");
    private static final String CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
            + "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

    private final TemplateEngine templates = TemplateEngine.createPrecompiled(ContentType.Html);

    /** The headers every dashboard answer carries. */
    public static void secure(Context ctx) {
        ctx.header("Content-Security-Policy", CSP);
        ctx.header("X-Content-Type-Options", "nosniff");
        ctx.header("Referrer-Policy", "no-referrer");
        ctx.header("Cache-Control", "no-store");
    }

    /** The whole page. */
    public void page(Context ctx, Dashboard.Snapshot s) {
        html(ctx, "dashboard/page.jte", s);
    }

    /** The part of the page that changes, for the page's script to swap in. */
    public void live(Context ctx, Dashboard.Snapshot s) {
        html(ctx, "dashboard/live.jte", s);
    }

    /** Renders a template with one parameter. */
    public void html(Context ctx, String template, Object param) {
        StringOutput out = new StringOutput();
        templates.render(template, param, out);
        ctx.contentType("text/html; charset=utf-8").result(out.toString());
    }

    /** One of the two assets by name; 404 for anything else. */
    public static void asset(Context ctx, String name) {
        String type = ASSETS.get(name);
        if (type == null) {
            ctx.status(404).contentType("text/plain; charset=utf-8").result("not found\n");
            return;
        }
        try (InputStream in = DashboardPages.class.getResourceAsStream("/dashboard/" + name)) {
            if (in == null) {
                throw new IllegalStateException("the jar lacks /dashboard/" + name);
            }
            ctx.contentType(type).result(in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The open pages of one dashboard, told when the state changed. */
    public static final class Feed {
        private final List<SseClient> clients = new CopyOnWriteArrayList<>();
        private final AtomicLong version = new AtomicLong();

        public void subscribe(SseClient client) {
            client.keepAlive();
            client.onClose(() -> clients.remove(client));
            clients.add(client);
            client.sendComment("connected");
        }

        public boolean isEmpty() {
            return clients.isEmpty();
        }

        public void changed() {
            long v = version.incrementAndGet();
            for (SseClient c : clients) {
                if (!alive(c)) {
                    clients.remove(c);
                    continue;
                }
                try {
                    c.sendEvent("changed", String.valueOf(v));
                } catch (RuntimeException e) {
                    clients.remove(c);
                }
            }
        }

        /** Ends the pages' event streams (the server stops); those whose browser went away are only forgotten. */
        public void close() {
            for (SseClient c : clients) {
                clients.remove(c);
                if (alive(c)) {
                    c.close();
                }
            }
        }

        /**
         * Whether the stream's request is still one the server serves. A page the browser left
         * ends its request in the HTTP server without the client hearing of it; closing such a
         * client (or writing to it, which closes it) makes Javalin finish a request that no longer
         * exists, and it then loops on the errors of its own error handling, so the server never
         * stops. Such a request answers any question with an exception.
         */
        static boolean alive(SseClient c) {
            if (c.terminated()) {
                return false;
            }
            try {
                c.ctx().req().getMethod();
                c.ctx().res().getStatus();
                return true;
            } catch (RuntimeException e) {
                return false;
            }
        }
    }
}
