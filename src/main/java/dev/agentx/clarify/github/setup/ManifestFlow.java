package dev.agentx.clarify.github.setup;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.http.HttpServerDefaults;
import dev.agentx.clarify.http.LoopbackHosts;
import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.HandlerType;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;

/**
 * GitHub's App manifest flow, served on {@code 127.0.0.1}: a page whose button posts the manifest to
 * GitHub's "new App" form, and the callback GitHub sends the browser to afterwards with a one-time
 * code, which is exchanged ({@code POST /app-manifests/{code}/conversions}) for the App's id, key,
 * webhook secret and OAuth client, then written into the data dir. A random {@code state} ties the
 * callback to this page, so no other site can make it write credentials.
 */
public final class ManifestFlow implements AutoCloseable {
    /** What to register and where: see {@code agentx setup --help}. */
    public record Options(URI publicUrl, String org, String name, String webhookPath, URI githubUrl, String apiUrl,
                          Path dataDir, String host, int port) {
    }

    /** How the flow ended: the App written, or why nothing was. */
    public sealed interface Outcome permits Registered, Failed {
    }

    public record Registered(Credentials app) implements Outcome {
    }

    public record Failed(String message) implements Outcome {
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    private final Options options;
    private final String state;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final CompletableFuture<Outcome> outcome = new CompletableFuture<>();
    private Javalin app;

    public ManifestFlow(Options options) {
        this.options = options;
        byte[] random = new byte[16];
        new SecureRandom().nextBytes(random);
        this.state = HexFormat.of().formatHex(random);
    }

    /** The page's own addresses, once bound. */
    private volatile LoopbackHosts hosts;

    /** Starts the page; {@link #address()} tells where. */
    public ManifestFlow start() {
        app = Javalin.create(cfg -> {
            HttpServerDefaults.apply(cfg);
            cfg.jetty.host = options.host();
            cfg.jetty.port = options.port();
            cfg.routes.before(this::guard);
            cfg.routes.addHttpHandler(HandlerType.GET, "/", this::page);
            cfg.routes.addHttpHandler(HandlerType.GET, "/callback", this::callback);
        }).start();
        hosts = new LoopbackHosts(options.host(), app.port());
        return this;
    }

    /** Only requests for this page's own address: the page carries the registration's state. */
    private void guard(Context ctx) {
        if (hosts == null) { // bound, its port not known yet
            ctx.status(503).skipRemainingHandlers();
            return;
        }
        hosts.admit(ctx, "setup page");
    }

    public URI address() {
        return URI.create("http://127.0.0.1:" + app.port() + "/");
    }

    /** Completes once GitHub's code was exchanged and the files written, or the exchange failed. */
    public CompletableFuture<Outcome> outcome() {
        return outcome;
    }

    /**
     * The manifest as posted: the repository's, with this installation's addresses; once the page
     * runs, GitHub sends the browser back to its callback.
     */
    public JsonNode manifest() {
        return AppManifest.filledIn(options.publicUrl(), options.webhookPath(),
                app == null ? null : address().resolve("/callback"), options.name());
    }

    /** GitHub's "new App" form: the account's, or the organization's. */
    public URI formAction() {
        String base = options.githubUrl().toString().replaceAll("/+$", "");
        String path = options.org() == null ? "/settings/apps/new"
                : "/organizations/" + URLEncoder.encode(options.org(), StandardCharsets.UTF_8) + "/settings/apps/new";
        return URI.create(base + path + "?state=" + state);
    }

    private void page(Context ctx) {
        String manifest = manifest().toString();
        String owner = options.org() == null ? "your account" : "the organization " + html(options.org());
        ctx.contentType("text/html; charset=utf-8").result("""
                <!doctype html>
                <html lang="en"><head><meta charset="utf-8"><title>Register AgentX Clarify</title>
                <meta name="viewport" content="width=device-width, initial-scale=1"></head>
                <body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; line-height: 1.5">
                <h1>Register the AgentX Clarify GitHub App</h1>
                <p>The button opens GitHub to create the App for %s, delivering webhooks to
                <code>%s</code>. Check the name there and confirm; GitHub then sends you back here and
                the App's credentials are written into <code>%s</code>.</p>
                <form action="%s" method="post">
                <input type="hidden" name="manifest" value="%s">
                <button type="submit" style="font-size: 1.2rem; padding: .5rem 1rem">Create the GitHub App</button>
                </form></body></html>
                """.formatted(owner, html(manifest().path("hook_attributes").path("url").asText()),
                html(options.dataDir().toString()), html(formAction().toString()), html(manifest)));
    }

    private void callback(Context ctx) {
        String code = ctx.queryParam("code");
        if (!state.equals(ctx.queryParam("state")) || code == null || !code.matches("[A-Za-z0-9_-]{1,100}")) {
            ctx.status(400).contentType("text/html; charset=utf-8").result(done("Not from this setup",
                    "This address was not reached from this setup page's button (its state does not match), "
                            + "so nothing was written. Start again from " + html(address().toString()) + "."));
            return;
        }
        Outcome result;
        int status = 200;
        String page;
        try {
            Credentials c = exchange(code);
            c.write(options.dataDir(), options.apiUrl(), options.webhookPath());
            result = new Registered(c);
            page = done("The App is registered",
                    "GitHub App <a href=\"" + html(c.htmlUrl()) + "\">" + html(c.name().isBlank() ? c.slug() : c.name())
                            + "</a> (id " + html(c.appId()) + ") is registered and its credentials are in <code>"
                            + html(options.dataDir().toString()) + "</code>. Next, <a href=\"" + html(c.installUrl())
                            + "\">install it</a> on your repositories and start <code>agentx serve</code>.");
        } catch (IOException | RuntimeException e) {
            result = new Failed(e.getMessage());
            status = 502;
            page = done("The App's credentials could not be fetched", html(e.getMessage()) + " Nothing was written.");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            result = new Failed("interrupted");
            status = 500;
            page = done("Interrupted", "Nothing was written.");
        }
        // the page reaches the browser before the outcome lets the command stop this server
        byte[] body = page.getBytes(StandardCharsets.UTF_8);
        ctx.status(status).contentType("text/html; charset=utf-8").header("Connection", "close");
        try {
            ctx.res().setContentLength(body.length);
            ctx.outputStream().write(body);
            ctx.res().flushBuffer();
        } catch (IOException e) {
            // the browser went away: the outcome stands all the same
        }
        outcome.complete(result);
    }

    /** Trades the one-time code for the App's credentials. */
    Credentials exchange(String code) throws IOException, InterruptedException {
        URI uri = URI.create(options.apiUrl().replaceAll("/+$", "") + "/app-manifests/" + code + "/conversions");
        HttpRequest request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30))
                .header("Accept", "application/vnd.github+json").header("X-GitHub-Api-Version", "2022-11-28")
                .header("User-Agent", "agentx-clarify-setup")
                .POST(HttpRequest.BodyPublishers.noBody()).build();
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() == 404 || response.statusCode() == 422) {
            throw new IllegalStateException("GitHub answered " + response.statusCode() + " to the code exchange: the "
                    + "code is used or expired (it is valid once, for an hour). The App may exist on GitHub already: "
                    + "delete it in its settings, or generate a private key there and set the variables by hand "
                    + "(docs/github-app.md), then run agentx setup again.");
        }
        if (response.statusCode() / 100 != 2) {
            throw new IllegalStateException("GitHub answered " + response.statusCode() + " to the code exchange at "
                    + uri + ": " + response.body().lines().findFirst().orElse(""));
        }
        return Credentials.of(JSON.readTree(response.body()));
    }

    private static String done(String title, String body) {
        return "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + html(title)
                + "</title></head><body style=\"font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem "
                + "auto; line-height: 1.5\"><h1>" + html(title) + "</h1><p>" + body + "</p></body></html>\n";
    }

    static String html(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;")
                .replace("'", "&#39;");
    }

    @Override
    public void close() {
        if (app != null) {
            app.stop();
        }
    }
}
