package dev.agentx.clarify.dashboard;

import dev.agentx.clarify.ledger.LedgerWatcher;
import gg.jte.ContentType;
import gg.jte.TemplateEngine;
import gg.jte.output.StringOutput;
import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.sse.SseClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dashboard's web server: the page ({@code /}), its live part ({@code /live}), server-sent
 * change events ({@code /events}) and its two assets. It only reads: every request renders a new
 * {@link Dashboard.Snapshot}. A change of a ledger (seen through file notifications) or of the
 * agent statuses and event log (looked at every second) is pushed to every open page as a
 * {@code changed} event, and the page fetches {@code /live} again.
 *
 * <p>It answers only requests addressed to its own loopback address (the Host header), so a web
 * page elsewhere cannot read it through DNS rebinding, and sends a content security policy that
 * allows nothing from outside.
 */
public final class DashboardServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DashboardServer.class);
    private static final Map<String, String> ASSETS = Map.of("dashboard.css", "text/css; charset=utf-8",
            "dashboard.js", "text/javascript; charset=utf-8");
    private static final String CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
            + "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

    private final Supplier<Dashboard.Snapshot> snapshots;
    private final Path ledgerDir;
    private final List<Path> polled;
    private final TemplateEngine templates = TemplateEngine.createPrecompiled(ContentType.Html);
    private final List<SseClient> clients = new CopyOnWriteArrayList<>();
    private final AtomicLong version = new AtomicLong();
    private Javalin app;
    private LedgerWatcher watcher;
    private ScheduledExecutorService poller;
    private Set<String> hosts = Set.of();

    /**
     * @param ledgerDir the folder of the ledgers, watched for changes
     * @param polled    files looked at every second for a change (agent statuses, the event log)
     */
    public DashboardServer(Supplier<Dashboard.Snapshot> snapshots, Path ledgerDir, List<Path> polled) {
        this.snapshots = snapshots;
        this.ledgerDir = ledgerDir;
        this.polled = List.copyOf(polled);
    }

    /** Starts on {@code host} (a loopback address) and {@code port} (0: any free port). */
    public synchronized DashboardServer start(String host, int port) {
        app = Javalin.create(cfg -> {
            cfg.startup.showJavalinBanner = false;
            cfg.startup.showOldJavalinVersionWarning = false;
            cfg.jetty.host = host;
            cfg.jetty.port = port;
            cfg.routes.before(this::guard);
            cfg.routes.get("/", ctx -> html(ctx, "dashboard/page.jte"));
            cfg.routes.get("/live", ctx -> html(ctx, "dashboard/live.jte"));
            cfg.routes.get("/assets/{name}", this::asset);
            cfg.routes.sse("/events", this::subscribe);
            cfg.routes.exception(RuntimeException.class, (e, ctx) -> {
                LOG.warn("{} {} failed: {}", ctx.method(), ctx.path(), e.toString(), e);
                ctx.status(500).contentType("text/plain; charset=utf-8").result("internal error: " + e.getMessage());
            });
        }).start();
        int bound = app.port();
        hosts = Set.copyOf(List.of("127.0.0.1:" + bound, "localhost:" + bound, "[::1]:" + bound, host + ":" + bound));
        watcher = new LedgerWatcher(ledgerDir, Duration.ofSeconds(30));
        watcher.onChange(issue -> changed());
        watcher.onOverflow(this::changed);
        poller = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "agentx-dashboard-poll");
            t.setDaemon(true);
            return t;
        });
        String[] last = {signature()};
        poller.scheduleWithFixedDelay(() -> {
            String now = signature();
            if (!now.equals(last[0])) {
                last[0] = now;
                changed();
            }
        }, 1, 1, TimeUnit.SECONDS);
        return this;
    }

    public int port() {
        return app.port();
    }

    /** The modification time and size of each polled file: a change of either is a change. */
    private String signature() {
        StringBuilder b = new StringBuilder();
        for (Path p : polled) {
            try {
                b.append(Files.getLastModifiedTime(p).toMillis()).append('/').append(Files.size(p)).append(';');
            } catch (IOException e) {
                b.append("-;");
            }
        }
        return b.toString();
    }

    /** Tells every open page that the state changed. */
    private void changed() {
        long v = version.incrementAndGet();
        for (SseClient c : clients) {
            try {
                c.sendEvent("changed", String.valueOf(v));
            } catch (RuntimeException e) {
                clients.remove(c);
            }
        }
    }

    private void subscribe(SseClient client) {
        client.keepAlive();
        client.onClose(() -> clients.remove(client));
        clients.add(client);
        client.sendComment("connected");
    }

    /** Only requests for this server's own address, and only reads. */
    private void guard(Context ctx) {
        String host = Objects.requireNonNullElse(ctx.header("Host"), "");
        if (!hosts.contains(host)) {
            ctx.status(403).contentType("text/plain; charset=utf-8")
                    .result("This dashboard answers only at http://127.0.0.1:" + app.port() + "/\n");
            ctx.skipRemainingHandlers();
            return;
        }
        ctx.header("Content-Security-Policy", CSP);
        ctx.header("X-Content-Type-Options", "nosniff");
        ctx.header("Referrer-Policy", "no-referrer");
        ctx.header("Cache-Control", "no-store");
    }

    private void html(Context ctx, String template) {
        StringOutput out = new StringOutput();
        templates.render(template, snapshots.get(), out);
        ctx.contentType("text/html; charset=utf-8").result(out.toString());
    }

    private void asset(Context ctx) {
        String name = ctx.pathParam("name");
        String type = ASSETS.get(name);
        if (type == null) {
            ctx.status(404).contentType("text/plain; charset=utf-8").result("not found\n");
            return;
        }
        try (InputStream in = DashboardServer.class.getResourceAsStream("/dashboard/" + name)) {
            if (in == null) {
                throw new IllegalStateException("the jar lacks /dashboard/" + name);
            }
            ctx.contentType(type).result(in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public synchronized void close() {
        if (poller != null) {
            poller.shutdownNow();
        }
        if (watcher != null) {
            watcher.close();
        }
        clients.forEach(SseClient::close);
        if (app != null) {
            app.stop();
        }
    }
}
