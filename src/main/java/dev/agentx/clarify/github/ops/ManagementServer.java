package dev.agentx.clarify.github.ops;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.agentx.clarify.metrics.ServerMetrics;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The management port ({@code AGENTX_MANAGEMENT_PORT}): {@code GET /metrics} (Prometheus text
 * format), {@code GET /readyz} ({@link Readiness}) and {@code GET /healthz} (the webhook port's
 * liveness answer, served here too). It is meant for the cluster's probes and Prometheus, not for
 * GitHub: keep it off the public ingress. The JDK's own HTTP server on two threads of its own, so
 * a scrape neither waits behind webhook requests nor takes one of their threads.
 */
public final class ManagementServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ManagementServer.class);
    public static final String HEALTH_PATH = "/healthz";
    public static final String READY_PATH = "/readyz";
    public static final String METRICS_PATH = "/metrics";
    static final List<String> PATHS = List.of(HEALTH_PATH, READY_PATH, METRICS_PATH);

    private final ServerMetrics metrics;
    private final Readiness readiness;
    private final Supplier<String> health;
    private HttpServer server;
    private ExecutorService threads;

    /** {@code health}: the JSON body of {@code /healthz}, as the webhook port answers it. */
    public ManagementServer(ServerMetrics metrics, Readiness readiness, Supplier<String> health) {
        this.metrics = metrics;
        this.readiness = readiness;
        this.health = health;
    }

    /** Starts listening on {@code host} (null: every interface); port 0 picks a free port ({@link #port()}). */
    public synchronized ManagementServer start(String host, int port) {
        try {
            server = HttpServer.create(host == null ? new InetSocketAddress(port) : new InetSocketAddress(host, port),
                    0);
        } catch (IOException e) {
            throw new IllegalStateException("cannot listen on the management port " + port + ": " + e.getMessage(), e);
        }
        AtomicInteger n = new AtomicInteger();
        threads = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "agentx-management-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(threads);
        server.createContext("/", this::handle);
        server.start();
        return this;
    }

    public synchronized int port() {
        return server.getAddress().getPort();
    }

    private void handle(HttpExchange x) throws IOException {
        try {
            answer(x);
        } catch (RuntimeException e) {
            LOG.error("{} {} failed: {}", x.getRequestMethod(), x.getRequestURI(), e.toString(), e);
            if (x.getResponseCode() == -1) { // nothing sent yet
                send(x, 500, "text/plain; charset=utf-8", ("internal error: " + e.getMessage() + "\n")
                        .getBytes(StandardCharsets.UTF_8));
            }
        } finally {
            x.close();
        }
    }

    private void answer(HttpExchange x) throws IOException {
        String path = x.getRequestURI().getPath();
        if (!PATHS.contains(path)) {
            send(x, 404, "text/plain; charset=utf-8", ("not found: " + path + "; this port serves " + PATHS
                    + "\n").getBytes(StandardCharsets.UTF_8));
            return;
        }
        String method = x.getRequestMethod();
        if (!method.equals("GET") && !method.equals("HEAD")) {
            x.getResponseHeaders().set("Allow", "GET");
            send(x, 405, "text/plain; charset=utf-8", (method + " is not allowed here; use GET\n")
                    .getBytes(StandardCharsets.UTF_8));
            return;
        }
        switch (path) {
            case METRICS_PATH -> {
                ByteArrayOutputStream body = new ByteArrayOutputStream(32768);
                metrics.scrape(body);
                send(x, 200, ServerMetrics.contentType(), body.toByteArray());
            }
            case READY_PATH -> {
                Readiness.Result r = readiness.check();
                send(x, r.ready() ? 200 : 503, "application/json", Readiness.json(r)
                        .getBytes(StandardCharsets.UTF_8));
            }
            default -> send(x, 200, "application/json", health.get().getBytes(StandardCharsets.UTF_8));
        }
    }

    private static void send(HttpExchange x, int status, String type, byte[] body) throws IOException {
        x.getResponseHeaders().set("Content-Type", type);
        boolean head = x.getRequestMethod().equals("HEAD");
        x.sendResponseHeaders(status, head ? -1 : body.length == 0 ? -1 : body.length);
        if (!head) {
            try (OutputStream out = x.getResponseBody()) {
                out.write(body);
            }
        }
    }

    @Override
    public synchronized void close() {
        if (server != null) {
            server.stop(0);
            threads.shutdownNow();
            server = null;
        }
    }
}
