package dev.agentx.clarify.dashboard;

import dev.agentx.clarify.http.HttpServerDefaults;
import dev.agentx.clarify.http.LoopbackHosts;
import dev.agentx.clarify.ledger.LedgerWatcher;
import io.javalin.Javalin;
import io.javalin.http.Context;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
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

    private final Supplier<Dashboard.Snapshot> snapshots;
    private final Path ledgerDir;
    private final List<Path> polled;
    private final DashboardPages pages = new DashboardPages();
    private final DashboardPages.Feed feed = new DashboardPages.Feed();
    private Javalin app;
    private LedgerWatcher watcher;
    private ScheduledExecutorService poller;
    private volatile LoopbackHosts hosts;

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
            HttpServerDefaults.apply(cfg);
            cfg.jetty.host = host;
            cfg.jetty.port = port;
            cfg.routes.before(this::guard);
            cfg.routes.get("/", ctx -> pages.page(ctx, snapshots.get()));
            cfg.routes.get("/live", ctx -> pages.live(ctx, snapshots.get()));
            cfg.routes.get("/assets/{name}", ctx -> DashboardPages.asset(ctx, ctx.pathParam("name")));
            cfg.routes.sse("/events", feed::subscribe);
            cfg.routes.exception(RuntimeException.class, (e, ctx) -> {
                LOG.warn("{} {} failed: {}", ctx.method(), ctx.path(), e.toString(), e);
                ctx.status(500).contentType("text/plain; charset=utf-8").result("internal error: " + e.getMessage());
            });
        }).start();
        int bound = app.port();
        hosts = new LoopbackHosts(host, bound);
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
        feed.changed();
    }

    /** Only requests for this server's own address, and only reads. */
    private void guard(Context ctx) {
        if (hosts == null) { // bound, its port not known yet
            ctx.status(503).skipRemainingHandlers();
            return;
        }
        if (hosts.admit(ctx, "dashboard")) {
            DashboardPages.secure(ctx);
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
        feed.close();
        if (app != null) {
            app.stop();
        }
    }
}
