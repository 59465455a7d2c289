package dev.agentx.clarify.github.dashboard;

import dev.agentx.clarify.dashboard.Dashboard;
import dev.agentx.clarify.dashboard.DashboardPages;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.store.CommentLinks;
import dev.agentx.clarify.store.DashboardSessions;
import dev.agentx.clarify.store.DashboardSessions.Session;
import io.javalin.config.RoutesConfig;
import io.javalin.http.Context;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The dashboard of {@code agentx serve} at {@code /dashboard}: the page of {@code agentx dashboard}
 * for every repository the server serves, behind "Sign in with GitHub" (the OAuth web flow with
 * the App's client id and secret). A signed-in user sees only the repositories of the App's
 * installations that GitHub says the user can read, as GitHub answered at sign-in. The session
 * is a random id in a signed, HttpOnly, Secure, SameSite=Lax cookie, kept for 8 hours; the
 * sign-in's state is bound to the browser by a second signed cookie, so a forged callback fails.
 * Nothing on these pages changes state but signing out (a POST that ends the session).
 */
public final class ServerDashboard implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ServerDashboard.class);
    static final String SESSION = "agentx_session";
    static final String STATE = "agentx_oauth_state";
    static final Duration SESSION_TIME = Duration.ofHours(8);
    private static final Duration STATE_TIME = Duration.ofMinutes(10);

    /** The index: who is signed in and the repositories they may look at. */
    public record Index(String login, List<String> repositories) {
    }

    private final GitHubUsers users;
    private final SignedCookies cookies;
    private final Clock clock;
    private final Supplier<List<RepoRef>> served;
    private final Function<String, String> signature;
    private final Function<RepoRef, Supplier<Dashboard.Snapshot>> snapshots;
    private final DashboardPages pages = new DashboardPages();
    private final CommentLinks links;
    private final DashboardSessions sessions;
    /** Why the pages cannot be shown now (the database is unreachable), or empty; read per request. */
    private volatile Supplier<Optional<String>> unavailable = Optional::empty;
    private final Map<String, DashboardPages.Feed> feeds = new ConcurrentHashMap<>();
    private final Map<String, String> signatures = new ConcurrentHashMap<>();
    private final ScheduledExecutorService poller;

    /**
     * @param served    the repositories the server serves, by their current names and ids
     * @param signature a value of a repository's state that changes whenever its ledgers or statuses do
     * @param snapshots a repository's snapshot, computed per request
     * @param links     the ids of the comments the App posted, for linking each thread entry to its comment
     * @param sessions  the signed-in users (shared by replicas on PostgreSQL)
     */
    public ServerDashboard(String apiUrl, String clientId, String clientSecret, Clock clock,
                           Supplier<List<RepoRef>> served, Function<String, String> signature,
                           Function<RepoRef, Supplier<Dashboard.Snapshot>> snapshots, CommentLinks links,
                           DashboardSessions sessions) {
        this.links = links;
        this.sessions = sessions;
        this.users = new GitHubUsers(apiUrl, clientId, clientSecret);
        this.cookies = new SignedCookies(clientSecret);
        this.clock = clock;
        this.served = served;
        this.signature = signature;
        this.snapshots = snapshots;
        this.poller = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "agentx-dashboard-poll");
            t.setDaemon(true);
            return t;
        });
        poller.scheduleWithFixedDelay(this::poll, 1, 1, TimeUnit.SECONDS);
    }

    /**
     * While {@code why} names a problem (the database the sessions and ledgers are in cannot be
     * reached), pages answer 503 at once rather than after the pool's connection timeout.
     */
    public ServerDashboard refuseWhile(Supplier<Optional<String>> why) {
        this.unavailable = why;
        return this;
    }

    /** Answers 503 if the pages cannot be shown now; whether it did. */
    private boolean refused(Context ctx) {
        Optional<String> problem = unavailable.get();
        if (problem.isEmpty()) {
            return false;
        }
        ctx.status(503).contentType("text/plain; charset=utf-8").result("The dashboard cannot be shown now: "
                + problem.get() + ". Try again in a moment.\n");
        return true;
    }

    /** The routes, on the server's HTTP port. */
    public void routes(RoutesConfig routes) {
        routes.get("/dashboard", this::index);
        routes.get("/dashboard/callback", this::callback);
        routes.post("/dashboard/sign-out", this::signOut);
        routes.get("/dashboard/signed-out", ctx -> {
            DashboardPages.secure(ctx);
            pages.html(ctx, "dashboard/signed-out.jte", "/dashboard");
        });
        routes.get("/dashboard/{owner}/{repo}", ctx -> repo(ctx, (s, c) -> pages.page(c, s)));
        routes.get("/dashboard/{owner}/{repo}/live", ctx -> repo(ctx, (s, c) -> pages.live(c, s)));
        routes.get("/dashboard/{owner}/{repo}/assets/{name}", ctx -> {
            DashboardPages.secure(ctx);
            DashboardPages.asset(ctx, ctx.pathParam("name"));
        });
        routes.sse("/dashboard/{owner}/{repo}/events", client -> {
            if (unavailable.get().isPresent()) {
                client.close(); // the page's script connects again
                return;
            }
            Optional<RepoRef> ref = allowed(client.ctx());
            if (ref.isEmpty()) {
                client.close();
                return;
            }
            feeds.computeIfAbsent(ref.get().fullName(), k -> new DashboardPages.Feed()).subscribe(client);
        });
    }

    private void index(Context ctx) {
        DashboardPages.secure(ctx);
        if (refused(ctx)) {
            return;
        }
        Optional<Session> session = session(ctx);
        if (session.isEmpty()) {
            signIn(ctx, "/dashboard");
            return;
        }
        List<String> visible = served.get().stream().map(RepoRef::fullName)
                .filter(session.get().repositories()::contains).sorted().toList();
        pages.html(ctx, "dashboard/index.jte", new Index(session.get().login(), visible));
    }

    /**
     * To GitHub's sign-in page, with a fresh state bound to this browser; the signed state cookie
     * also keeps {@code returnTo}, the page to show once signed in.
     */
    private void signIn(Context ctx, String returnTo) {
        String state = SignedCookies.random();
        setCookie(ctx, STATE, cookies.sign(STATE, state + "|" + returnTo, clock.instant().plus(STATE_TIME)),
                STATE_TIME);
        ctx.redirect(users.authorizeUrl(callbackUrl(ctx), state));
    }

    /** A page a sign-in may return to: the list or a repository's page, nothing else. */
    private static final java.util.regex.Pattern RETURNABLE =
            java.util.regex.Pattern.compile("/dashboard(/[A-Za-z0-9._-]+/[A-Za-z0-9._-]+)?");

    private void callback(Context ctx) {
        DashboardPages.secure(ctx);
        if (refused(ctx)) {
            return;
        }
        String state = ctx.queryParam("state");
        Optional<String> bound = cookies.verify(STATE, ctx.cookie(STATE), clock.instant());
        String code = ctx.queryParam("code");
        String boundState = bound.map(b -> b.contains("|") ? b.substring(0, b.indexOf('|')) : b).orElse(null);
        String returnTo = bound.map(b -> b.contains("|") ? b.substring(b.indexOf('|') + 1) : "").orElse("");
        if (state == null || code == null || boundState == null || !boundState.equals(state)) {
            LOG.warn("dashboard: a sign-in callback without a matching state was refused");
            ctx.status(400).contentType("text/plain; charset=utf-8")
                    .result("This sign-in is not one this browser started, or it took over 10 minutes. Start again at "
                            + "/dashboard.\n");
            return;
        }
        try {
            String redirect = callbackUrl(ctx);
            String token = users.token(code, redirect);
            String login = users.login(token);
            Set<String> repos = users.repositories(token);
            String id = SignedCookies.random();
            Instant expires = clock.instant().plus(SESSION_TIME);
            sessions.put(id, new Session(login, repos, expires), clock.instant());
            setCookie(ctx, SESSION, cookies.sign(SESSION, id, expires), SESSION_TIME);
            setCookie(ctx, STATE, "", Duration.ZERO);
            LOG.info("dashboard: {} signed in ({} repositories of the App's installations)", login, repos.size());
            ctx.redirect(RETURNABLE.matcher(returnTo).matches() ? returnTo : "/dashboard");
        } catch (IOException e) {
            LOG.warn("dashboard: sign-in failed: {}", e.getMessage());
            ctx.status(502).contentType("text/plain; charset=utf-8")
                    .result("Signing in with GitHub failed: " + e.getMessage() + ". Start again at /dashboard.\n");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            ctx.status(503).result("shutting down\n");
        }
    }

    /**
     * Ends the browser's session: forgotten by the server (every replica, on PostgreSQL), so the
     * cookie is worth nothing even if it was copied, and removed from the browser. The only request
     * that changes anything, so a POST; another site cannot make a signed-in browser send it with
     * its cookie (SameSite=Lax), and without one it does nothing but clear the cookie.
     */
    private void signOut(Context ctx) {
        DashboardPages.secure(ctx);
        if (refused(ctx)) {
            return;
        }
        cookies.verify(SESSION, ctx.cookie(SESSION), clock.instant()).flatMap(sessions::remove)
                .ifPresent(login -> LOG.info("dashboard: {} signed out", login));
        setCookie(ctx, SESSION, "", Duration.ZERO);
        ctx.redirect("/dashboard/signed-out", io.javalin.http.HttpStatus.SEE_OTHER);
    }

    /** A repository's page for a user who may read it; 404 for every other case, so nothing leaks. */
    private void repo(Context ctx, java.util.function.BiConsumer<Dashboard.Snapshot, Context> render) {
        DashboardPages.secure(ctx);
        if (refused(ctx)) {
            return;
        }
        if (session(ctx).isEmpty()) {
            // back to this page once signed in
            String page = "/dashboard/" + ctx.pathParam("owner") + "/" + ctx.pathParam("repo");
            signIn(ctx, RETURNABLE.matcher(page).matches() ? page : "/dashboard");
            return;
        }
        Optional<RepoRef> ref = allowed(ctx);
        if (ref.isEmpty()) {
            ctx.status(404).contentType("text/plain; charset=utf-8").result("No such repository on this dashboard.\n");
            return;
        }
        RepoRef r = ref.get();
        Map<Integer, Map<String, Long>> comments = new java.util.HashMap<>();
        Dashboard.Snapshot s = snapshots.apply(r).get().onGitHub("/dashboard/" + r.fullName(),
                users.webUrl() + "/" + r.fullName() + "/issues/", (issue, record, index) -> comments
                        .computeIfAbsent(issue, n -> links.of(r.stateKey(), n)).get(r.stateKey() + "#" + issue + "/"
                                + record + "/" + index));
        render.accept(s, ctx);
    }

    /** The repository of the path, if the session's user may read it and the server serves it. */
    private Optional<RepoRef> allowed(Context ctx) {
        Optional<Session> session = session(ctx);
        String owner = ctx.pathParam("owner");
        String repo = ctx.pathParam("repo");
        RepoRef ref;
        try {
            ref = new RepoRef(owner, repo);
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
        if (session.isEmpty()) {
            return Optional.empty();
        }
        // owner and repository names are GitHub's in any case: the served one's is the one shown
        Optional<RepoRef> known = served.get().stream().filter(n -> n.fullName().equalsIgnoreCase(ref.fullName()))
                .findFirst();
        if (known.isEmpty() || session.get().repositories().stream()
                .noneMatch(n -> n.equalsIgnoreCase(known.get().fullName()))) {
            return Optional.empty();
        }
        return known;
    }

    private Optional<Session> session(Context ctx) {
        Instant now = clock.instant();
        return cookies.verify(SESSION, ctx.cookie(SESSION), now).flatMap(id -> sessions.get(id, now));
    }

    /** Where GitHub sends the browser back: this server's own address as the browser used it. */
    private static String callbackUrl(Context ctx) {
        String proto = ctx.header("X-Forwarded-Proto");
        String host = ctx.header("X-Forwarded-Host");
        String scheme = proto != null ? proto.split(",")[0].strip() : ctx.scheme();
        return scheme + "://" + (host != null ? host.split(",")[0].strip() : ctx.host()) + "/dashboard/callback";
    }

    private static void setCookie(Context ctx, String name, String value, Duration maxAge) {
        ctx.res().addHeader("Set-Cookie", name + "=" + value + "; Path=/dashboard; Max-Age=" + maxAge.toSeconds()
                + "; HttpOnly; Secure; SameSite=Lax");
    }

    /** Tells the open pages of a repository that its state changed (its ledgers or statuses). */
    private void poll() {
        try {
            for (Map.Entry<String, DashboardPages.Feed> f : feeds.entrySet()) {
                if (f.getValue().isEmpty()) {
                    continue;
                }
                String now = signature.apply(f.getKey());
                String before = signatures.put(f.getKey(), now);
                if (before != null && !before.equals(now)) {
                    f.getValue().changed();
                }
            }
        } catch (RuntimeException e) {
            LOG.debug("dashboard poll: {}", e.toString());
        }
    }

    @Override
    public void close() {
        poller.shutdownNow();
        feeds.values().forEach(DashboardPages.Feed::close);
    }
}
