package dev.agentx.clarify.github.webhook;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.github.inbox.Inbox;
import dev.agentx.clarify.github.inbox.Worker;
import dev.agentx.clarify.github.outbox.Outbox;
import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.HandlerType;
import io.javalin.http.HttpResponseException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP side of GitHub Mode (Javalin): {@code POST <webhook path>} and {@code GET /healthz}.
 *
 * <p>Checks, in order: method (405, with {@code Allow}), content type {@code application/json}
 * (415), {@code X-GitHub-Event} and a well-formed {@code X-GitHub-Delivery} (400), body size (413
 * above the limit), {@code X-Hub-Signature-256} over the raw bytes before any parsing (401), the
 * body is strict UTF-8 and one JSON object, nested at most 1000 deep (Jackson's limit) (400). Then the delivery is written to the durable inbox: 202, or 200 if
 * its id was seen before. Nothing is written for any refused request.
 */
public final class WebhookServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(WebhookServer.class);

    private final String path;
    private final long maxBody;
    private final SignatureVerifier verifier;
    private final Inbox inbox;
    private final Outbox outbox;
    private final Worker worker;
    /** Strict: trailing content after the object (like {@code {} {}}) is not a JSON object either. */
    private final ObjectMapper json = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    private Javalin app;

    public WebhookServer(String path, long maxBody, SignatureVerifier verifier, Inbox inbox, Outbox outbox,
                         Worker worker) {
        this.path = path;
        this.maxBody = maxBody;
        this.verifier = verifier;
        this.inbox = inbox;
        this.outbox = outbox;
        this.worker = worker;
    }

    /** Starts listening; port 0 picks a free port ({@link #port()}). */
    public synchronized WebhookServer start(String host, int port) {
        app = Javalin.create(cfg -> {
            cfg.startup.showJavalinBanner = false;
            cfg.startup.showOldJavalinVersionWarning = false;
            cfg.http.maxRequestSize = maxBody;
            cfg.jetty.port = port;
            if (host != null) {
                cfg.jetty.host = host;
            }
            for (HandlerType method : HandlerType.commonHttp()) {
                if (method.equals(HandlerType.POST)) {
                    cfg.routes.addHttpHandler(method, path, this::webhook);
                } else {
                    cfg.routes.addHttpHandler(method, path, ctx -> notAllowed(ctx, "POST"));
                }
                if (method.equals(HandlerType.GET)) {
                    cfg.routes.addHttpHandler(method, "/healthz", this::health);
                } else if (!method.equals(HandlerType.HEAD)) {
                    cfg.routes.addHttpHandler(method, "/healthz", ctx -> notAllowed(ctx, "GET"));
                }
            }
            cfg.routes.exception(RuntimeException.class, (e, ctx) -> {
                LOG.error("{} {} failed: {}", ctx.method(), ctx.path(), e.toString(), e);
                ctx.status(500).contentType("text/plain").result("internal error: " + e.getMessage() + "\n");
            });
        }).start();
        return this;
    }

    public int port() {
        return app.port();
    }

    private static void reply(Context ctx, int status, String message) {
        ctx.status(status).contentType("text/plain; charset=utf-8").result(message + "\n");
    }

    private static void notAllowed(Context ctx, String allow) {
        ctx.header("Allow", allow);
        reply(ctx, 405, ctx.method() + " is not allowed here; use " + allow);
    }

    private void health(Context ctx) {
        ctx.status(200).contentType("application/json").result("{\"status\":\"ok\",\"pendingDeliveries\":"
                + inbox.pending().size() + ",\"pendingEffects\":" + outbox.size() + "}");
    }

    private void webhook(Context ctx) {
        String type = ctx.header("Content-Type");
        if (type == null || !type.toLowerCase(Locale.ROOT).strip().matches("application/json\\s*(;.*)?")) {
            reply(ctx, 415, "Content-Type must be application/json (set the GitHub App's webhook content type "
                    + "to application/json), got " + (type == null ? "none" : "'" + type + "'"));
            return;
        }
        String event = ctx.header("X-GitHub-Event");
        String delivery = ctx.header("X-GitHub-Delivery");
        if (event == null || event.isBlank() || !event.matches("[a-z_]{1,64}")) {
            reply(ctx, 400, "missing or malformed X-GitHub-Event header");
            return;
        }
        if (delivery == null || !Inbox.validId(delivery)) {
            reply(ctx, 400, "missing or malformed X-GitHub-Delivery header");
            return;
        }
        if (ctx.contentLength() > maxBody) {
            reply(ctx, 413, "body of " + ctx.contentLength() + " bytes exceeds the limit of " + maxBody + " bytes");
            return;
        }
        byte[] body;
        try {
            body = ctx.bodyAsBytes();
        } catch (HttpResponseException e) {
            reply(ctx, 413, "body exceeds the limit of " + maxBody + " bytes");
            return;
        }
        if (!verifier.verify(body, ctx.header("X-Hub-Signature-256"))) {
            LOG.warn("delivery {} ({}): missing or wrong X-Hub-Signature-256; refused", delivery, event);
            reply(ctx, 401, "missing or wrong X-Hub-Signature-256: sign the raw body with HMAC-SHA256 and the "
                    + "webhook secret");
            return;
        }
        if (!validUtf8(body)) {
            reply(ctx, 400, "the body is not valid UTF-8");
            return;
        }
        try {
            JsonNode node = json.readTree(body);
            if (node == null || !node.isObject()) {
                reply(ctx, 400, "the body must be a JSON object");
                return;
            }
        } catch (JsonProcessingException e) {
            reply(ctx, 400, "the body is not valid JSON: " + e.getOriginalMessage());
            return;
        } catch (java.io.IOException e) {
            throw new UncheckedIOException(e);
        }
        Inbox.Accepted accepted = inbox.accept(delivery, event, body);
        if (accepted == Inbox.Accepted.DUPLICATE) {
            LOG.info("delivery {} ({}) was received before; not processed again", delivery, event);
            reply(ctx, 200, "duplicate delivery " + delivery + ": already received");
            return;
        }
        LOG.info("delivery {} ({}) queued", delivery, event);
        worker.wake();
        reply(ctx, 202, "queued " + delivery);
    }

    /** Strict UTF-8 (JSON's encoding): no stray, truncated or overlong sequences, no encoded surrogates. */
    static boolean validUtf8(byte[] body) {
        try {
            StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(body));
            return true;
        } catch (CharacterCodingException e) {
            return false;
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
