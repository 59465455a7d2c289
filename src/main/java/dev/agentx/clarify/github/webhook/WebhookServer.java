package dev.agentx.clarify.github.webhook;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.agentx.clarify.github.Payloads;
import dev.agentx.clarify.github.inbox.AckPriority;
import dev.agentx.clarify.github.inbox.Worker;
import dev.agentx.clarify.github.outbox.Outbox;
import dev.agentx.clarify.http.HttpServerDefaults;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.store.DeliveryQueue;
import dev.agentx.clarify.store.InboundDelivery;
import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.HttpResponseException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP side of GitHub Mode (Javalin): {@code POST <webhook path>} and {@code GET /healthz}
 * (liveness, where load balancers look for it). Readiness and metrics are on the management port
 * ({@link dev.agentx.clarify.github.ops.ManagementServer}), so they are not public with the webhook;
 * here those paths are 404. While shutting down, webhooks get 503 so GitHub redelivers later.
 *
 * <p>Checks, in order: method (405, with {@code Allow}), content type {@code application/json}
 * (415), {@code X-GitHub-Event} and a well-formed {@code X-GitHub-Delivery} (400), body size (413
 * above the limit), room in the body budget (503 before the body is read), {@code X-Hub-Signature-256} over the raw bytes before any parsing (401), the
 * body is strict UTF-8 and one JSON object, nested at most 1000 deep (Jackson's limit) (400). Then the delivery is written to the durable inbox: 202, or 200 if
 * its id was seen before. Nothing is written for any refused request.
 */
public final class WebhookServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(WebhookServer.class);
    private static final Pattern JSON_TYPE = Pattern.compile("application/json\\s*(;.*)?");
    /** GitHub's event names: lower case, with digits and underscores ({@code projects_v2_item}). */
    private static final Pattern EVENT_NAME = Pattern.compile("[a-z][a-z0-9_]{0,63}");

    private final String path;
    private final long maxBody;
    private final SignatureVerifier verifier;
    private final DeliveryQueue inbox;
    private final Outbox outbox;
    private final Worker worker;
    private final ServerMetrics metrics;
    /** Strict: trailing content after the object (like {@code {} {}}) is not a JSON object either. */
    private volatile boolean stopping;
    private static final String SHUTTING_DOWN = "agentx serve is shutting down; redeliver this delivery once it is back";
    /** Follows the reason of a 503 while the database cannot be reached. */
    private static final String NOT_ACKNOWLEDGED = "; this delivery was not acknowledged: it is asked for again "
            + "once that is over (the recovery pass), or redeliver it";
    /**
     * Follows the reason of a 503 for a delivery whose insert failed: the database may have
     * committed it before the connection gave out, which nothing here can tell.
     */
    private static final String MAYBE_QUEUED = "; this delivery was not acknowledged, though its insert may have "
            + "reached the database (then it is processed once, and a redelivery is answered as a duplicate): it is "
            + "asked for again once that is over (the recovery pass), or redeliver it";
    /** Why deliveries cannot be committed now (the database is unreachable), or empty; read per request. */
    private volatile java.util.function.Supplier<java.util.Optional<String>> unavailable = java.util.Optional::empty;
    /** Asks again at once what {@link #unavailable} answers from its last look; see {@link #refuseWhile}. */
    private volatile java.util.function.Supplier<java.util.Optional<String>> checkNow = java.util.Optional::empty;
    private volatile Javalin app;
    /**
     * Bodies are read whole before their signature can be checked, so anyone can make the server
     * hold them: their bytes together are kept within this budget, and a request that would go
     * over it is refused with 503 before its body is read (see {@link #defaultBodyBudget}).
     */
    private volatile BodyBudget bodies;

    /** The path served besides the webhook path. */
    public static final String HEALTH_PATH = "/healthz";

    public WebhookServer(String path, long maxBody, SignatureVerifier verifier, DeliveryQueue inbox, Outbox outbox,
                         Worker worker, ServerMetrics metrics) {
        this.metrics = metrics;
        this.path = path;
        this.maxBody = maxBody;
        this.verifier = verifier;
        this.inbox = inbox;
        this.outbox = outbox;
        this.worker = worker;
        this.bodies = new BodyBudget(defaultBodyBudget(maxBody, Runtime.getRuntime().maxMemory()));
    }

    /**
     * An eighth of the heap, and never less than one body of the largest size: a delivery's body
     * is held two or three times over while it is read, checked and queued, so a flood of large
     * unsigned bodies leaves the heap most of its room. GitHub's deliveries are mostly a few
     * kilobytes: at 384 MB of heap (the Kubernetes recipe's) that is 48 MB, a thousand of them at
     * once.
     */
    static long defaultBodyBudget(long maxBody, long maxHeap) {
        return Math.max(maxBody, maxHeap / 8);
    }

    /** Bytes of bodies taken from the budget now. */
    long bodyBytesInUse() {
        return bodies.inUse();
    }

    /** Sets the bytes of bodies read at once (tests; the default is {@link #defaultBodyBudget}). */
    public WebhookServer bodyBudget(long bytes) {
        this.bodies = new BodyBudget(bytes);
        return this;
    }

    private final java.util.List<java.util.function.Consumer<io.javalin.config.RoutesConfig>> extraRoutes =
            new java.util.ArrayList<>();

    /** More routes on the same port (the dashboard); call before {@link #start}. */
    public WebhookServer withRoutes(java.util.function.Consumer<io.javalin.config.RoutesConfig> routes) {
        extraRoutes.add(routes);
        return this;
    }

    /** Starts listening; port 0 picks a free port ({@link #port()}). */
    public synchronized WebhookServer start(String host, int port) {
        app = Javalin.create(cfg -> {
            HttpServerDefaults.apply(cfg);
            cfg.jetty.modifyServer(server -> server.setErrorHandler(new StoppingErrorHandler()));
            cfg.http.maxRequestSize = maxBody;
            cfg.jetty.port = port;
            if (host != null) {
                cfg.jetty.host = host;
            }
            // another method on either path: 405 with Allow (HttpServerDefaults)
            cfg.routes.post(path, this::webhook);
            cfg.routes.get(HEALTH_PATH, this::health);
            extraRoutes.forEach(r -> r.accept(cfg.routes));
            cfg.routes.exception(RuntimeException.class, (e, ctx) -> {
                LOG.error("{} {} failed: {}", ctx.method(), ctx.path(), e.toString(), e);
                ctx.status(500).contentType("text/plain").result("internal error: " + e.getMessage() + "\n");
            });
        }).start();
        return this;
    }

    /** Whether reading a request's body failed on the request itself (an I/O or HTTP parsing error). */
    private static boolean readFailure(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.io.IOException || t instanceof org.eclipse.jetty.http.BadMessageException) {
                return true;
            }
        }
        return false;
    }

    public int port() {
        return app.port();
    }

    /** Whether the port takes connections: started and not closed. */
    public boolean listening() {
        return app != null;
    }

    private static void reply(Context ctx, int status, String message) {
        ctx.status(status).contentType("text/plain; charset=utf-8").result(message + "\n");
    }


    /** The liveness answer, on this port and on the management port. */
    public String healthBody() {
        return "{\"status\":\"ok\",\"pendingDeliveries\":" + inbox.size() + ",\"pendingEffects\":" + outbox.size()
                + "}";
    }

    private void health(Context ctx) {
        ctx.status(200).contentType("application/json").result(healthBody());
    }

    /**
     * While {@code why} names a problem (the database cannot be reached), verified deliveries are
     * refused with 503: nothing is acknowledged that could not be carried out now. A proxy passes
     * the delivery to another replica; without one GitHub records a failure, which the recovery
     * pass asks GitHub to send again. Asked on every delivery, so it must be cheap: it answers from
     * the last look. {@code checkNow} looks again (it may take a moment); it is asked when queueing a
     * delivery failed, so a delivery that comes in after the database went and before the next look
     * gets the same 503 (which a proxy passes to another replica), not a 500, and the deliveries
     * after it are refused at once by the verdict that look leaves behind.
     */
    public WebhookServer refuseWhile(java.util.function.Supplier<java.util.Optional<String>> why,
                                     java.util.function.Supplier<java.util.Optional<String>> checkNow) {
        this.unavailable = why;
        this.checkNow = checkNow;
        return this;
    }

    /**
     * The answers Jetty writes itself, with no handler of ours involved: a connection that fails
     * while no request is under way on it (closed as the server stops) gets Jetty's 500 page for
     * a made-up {@code GET /badRequest}, which a client that has just sent its next request on
     * that connection reads as the answer to it. While stopping that answer is the webhook's own
     * 503 (send it again), not a server error; otherwise Jetty's default.
     */
    private final class StoppingErrorHandler extends org.eclipse.jetty.server.handler.ErrorHandler {
        @Override
        public boolean handle(org.eclipse.jetty.server.Request request, org.eclipse.jetty.server.Response response,
                              org.eclipse.jetty.util.Callback callback) throws Exception {
            if (!stopping) {
                return super.handle(request, response, callback);
            }
            LOG.info("a request cut short as the server stops ({}): answered 503",
                    request.getAttribute(ERROR_EXCEPTION));
            metrics.webhookRefused(503);
            response.setStatus(503);
            response.getHeaders().put(org.eclipse.jetty.http.HttpHeader.CONNECTION, "close");
            response.getHeaders().put(org.eclipse.jetty.http.HttpHeader.CONTENT_TYPE, "text/plain; charset=utf-8");
            response.write(true, ByteBuffer.wrap((SHUTTING_DOWN + "\n").getBytes(StandardCharsets.UTF_8)), callback);
            return true;
        }
    }

    /** Shutting down: webhooks are answered 503 (GitHub shows them failed; redeliver them later). */
    public void stopTaking() {
        stopping = true;
    }

    private void refused(Context ctx, int status, String message) {
        metrics.webhookRefused(status);
        reply(ctx, status, message);
    }

    private void webhook(Context ctx) {
        long started = System.nanoTime();
        try {
            accept(ctx, started);
        } finally {
            metrics.webhookAnswered(ctx.statusCode(), started);
        }
    }

    /** {@code started}: when the handler began (System.nanoTime), for the 202's Server-Timing. */
    private void accept(Context ctx, long started) {
        if (stopping) {
            refused(ctx, 503, SHUTTING_DOWN);
            return;
        }
        String type = ctx.header("Content-Type");
        if (type == null || !JSON_TYPE.matcher(type.toLowerCase(Locale.ROOT).strip()).matches()) {
            refused(ctx, 415, "Content-Type must be application/json (set the GitHub App's webhook content type "
                    + "to application/json), got " + (type == null ? "none" : "'" + type + "'"));
            return;
        }
        String event = ctx.header("X-GitHub-Event");
        String delivery = ctx.header("X-GitHub-Delivery");
        if (event == null || event.isBlank() || !EVENT_NAME.matcher(event).matches()) {
            refused(ctx, 400, "missing or malformed X-GitHub-Event header");
            return;
        }
        if (delivery == null || !InboundDelivery.validId(delivery)) {
            refused(ctx, 400, "missing or malformed X-GitHub-Delivery header");
            return;
        }
        if (ctx.contentLength() > maxBody) {
            refused(ctx, 413, "body of " + ctx.contentLength() + " bytes exceeds the limit of " + maxBody + " bytes");
            return;
        }
        // a body sent in chunks may grow to the limit: it is counted at the limit
        long claim = ctx.contentLength() >= 0 ? ctx.contentLength() : maxBody;
        BodyBudget budget = bodies;
        if (!budget.tryTake(claim)) {
            LOG.warn("delivery {} ({}): {} bytes of bodies are being read, and {} more would go over {}; answered 503",
                    delivery, event, budget.inUse(), claim, budget.capacity());
            ctx.header("Retry-After", "1");
            refused(ctx, 503, "too many deliveries are being read at once; this delivery was not acknowledged: "
                    + "redeliver it");
            return;
        }
        try {
            acceptBody(ctx, started, event, delivery);
        } finally {
            budget.give(claim);
        }
    }

    /** The checks and the queueing that need the body, within its share of the body budget. */
    private void acceptBody(Context ctx, long started, String event, String delivery) {
        byte[] body;
        try {
            body = ctx.bodyAsBytes();
        } catch (HttpResponseException e) {
            refused(ctx, 413, "body exceeds the limit of " + maxBody + " bytes");
            return;
        } catch (Exception e) { // Javalin (Kotlin) lets Jetty's IOException through undeclared
            // a body that cannot be read as HTTP (a broken chunked encoding, a connection that ended
            // early) is the client's fault: 400, logged in one line, never a 500 with a stack trace
            if (!readFailure(e)) {
                throw e instanceof RuntimeException r ? r : new IllegalStateException(e);
            }
            LOG.info("delivery {} ({}): the body could not be read: {}", delivery, event, e.getMessage());
            refused(ctx, 400, "the body could not be read as HTTP (a malformed chunked encoding or an early end)");
            return;
        }
        if (!verifier.verify(body, ctx.header("X-Hub-Signature-256"))) {
            LOG.warn("delivery {} ({}): missing or wrong X-Hub-Signature-256; refused", delivery, event);
            refused(ctx, 401, "missing or wrong X-Hub-Signature-256: sign the raw body with HMAC-SHA256 and the "
                    + "webhook secret");
            return;
        }
        // counted from here: what the worker steps back for is the signed deliveries being checked and
        // queued, not a client sending its body slowly or a flood of unsigned requests
        AckPriority priority = worker.priority();
        priority.requestStarted();
        try {
            queue(ctx, started, event, delivery, body);
        } finally {
            priority.requestEnded();
        }
    }

    /** A signed delivery's last checks and its durable queueing, counted by {@link AckPriority}. */
    private void queue(Context ctx, long started, String event, String delivery, byte[] body) {
        if (!validUtf8(body)) {
            refused(ctx, 400, "the body is not valid UTF-8");
            return;
        }
        Payloads.Head head;
        try {
            head = Payloads.head(body);
            if (head == null) {
                refused(ctx, 400, "the body must be a JSON object");
                return;
            }
        } catch (JsonProcessingException e) {
            refused(ctx, 400, "the body is not valid JSON: " + e.getOriginalMessage());
            return;
        } catch (java.io.IOException e) {
            throw new UncheckedIOException(e);
        }
        // numbers the worker acts on are checked here, so a delivery it could not act on is never acknowledged
        if (head.issue() == Payloads.INVALID) {
            refused(ctx, 400, "issue.number must be a positive whole number, got " + head.issueNumber());
            return;
        }
        if (head.installation() != null && Payloads.id(head.installation().get("id")) == 0) {
            refused(ctx, 400, "installation.id must be a positive whole number");
            return;
        }
        java.util.Optional<String> problem = unavailable.get();
        if (problem.isPresent()) {
            refused(ctx, 503, problem.get() + NOT_ACKNOWLEDGED);
            return;
        }
        long queueing = System.nanoTime();
        DeliveryQueue.Accepted accepted;
        try {
            accepted = inbox.accept(delivery, event, body, head.orderKey());
        } catch (RuntimeException e) {
            // a look another delivery's failure asked for may have found it gone already: no second look then
            problem = unavailable.get().or(checkNow);
            if (problem.isEmpty()) {
                throw e; // the store is there and still failed: a server error
            }
            LOG.warn("delivery {} ({}) could not be queued ({}): {}; answered 503", delivery, event, e.getMessage(),
                    problem.get());
            refused(ctx, 503, problem.get() + MAYBE_QUEUED);
            return;
        }
        long queued = System.nanoTime() - queueing;
        String action = head.action().asText("");
        if (accepted == DeliveryQueue.Accepted.DUPLICATE) {
            metrics.delivery(event, action, "duplicate"); // its final outcome: it is not processed again
            LOG.info("delivery {} ({}) was received before; not processed again", delivery, event);
            reply(ctx, 200, "duplicate delivery " + delivery + ": already received");
            return;
        }
        // counted in agentx_deliveries_total once the worker is done with it (processed or failed)
        metrics.webhookQueued(queued);
        LOG.info("delivery {} ({}) queued", delivery, event);
        worker.wake();
        ctx.header("Server-Timing", serverTiming(queued, System.nanoTime() - started));
        reply(ctx, 202, "queued " + delivery);
    }

    /**
     * The 202's {@code Server-Timing} header (W3C Server Timing): {@code queue}, queueing the delivery
     * durably (the inbox append and its shared fdatasync, or on PostgreSQL the commit of its row);
     * {@code handler}, the whole handler from its first line (checks,
     * signature, parsing, queueing). Milliseconds. What the client measured beyond {@code handler}
     * passed before the handler ran or after it (a busy core, the JVM paused, the network stack):
     * the webhook benchmark reads it to say where a slow acknowledgement waited.
     */
    static String serverTiming(long queueNanos, long handlerNanos) {
        StringBuilder out = new StringBuilder(64).append("queue;dur=");
        millis(out, queueNanos).append(";desc=\"durable queueing\", handler;dur=");
        return millis(out, handlerNanos).toString();
    }

    /** {@code nanos} as milliseconds with three decimals, rounded half up (what {@code %.3f} writes). */
    static StringBuilder millis(StringBuilder out, long nanos) {
        long micros = Math.max(0, (nanos + 500) / 1000);
        long fraction = micros % 1000;
        out.append(micros / 1000).append('.');
        if (fraction < 100) {
            out.append(fraction < 10 ? "00" : "0");
        }
        return out.append(fraction);
    }

    /**
     * Strict UTF-8 (JSON's encoding): no stray, truncated or overlong sequences, no encoded
     * surrogates. Decoded a few thousand characters at a time into one buffer, which is dropped:
     * only whether it decodes matters.
     */
    static boolean validUtf8(byte[] body) {
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(body);
        CharBuffer out = CharBuffer.allocate(Math.min(body.length, 4096) + 2);
        while (true) {
            CoderResult r = decoder.decode(in, out, true);
            if (r.isError()) {
                return false;
            }
            if (r.isUnderflow()) {
                return !decoder.flush(out).isError();
            }
            out.clear(); // overflow: the buffer is full, decode on
        }
    }

    @Override
    public synchronized void close() {
        if (app != null) {
            app.stop();
            app = null;
        }
    }
}
