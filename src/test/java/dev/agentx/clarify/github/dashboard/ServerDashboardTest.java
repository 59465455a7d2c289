package dev.agentx.clarify.github.dashboard;

import static com.github.tomakehurst.wiremock.client.WireMock.containing;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.channel.HumanChannel;
import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestPostgres;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * /dashboard on the server, against WireMock as GitHub (its OAuth endpoints and the user-token
 * API in GitHub's shapes): the sign-in, two users who each see only the repository GitHub says
 * they can read, forged sign-ins and tampered cookies refused.
 */
@Tag("postgres")
class ServerDashboardTest {
    private static final RepoRef WIDGETS = new RepoRef("acme", "widgets", 4_242_001);

    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).build();

    private HttpResponse<String> fetch(int port, String path, String cookie) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
        if (cookie != null) {
            b.header("Cookie", cookie);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> signOut(int port, String cookie) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/dashboard/sign-out"))
                .POST(HttpRequest.BodyPublishers.noBody());
        if (cookie != null) {
            b.header("Cookie", cookie);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The session cookie the answer sets: cleared, for the whole dashboard. */
    private static void assertCleared(HttpResponse<?> r) {
        String set = r.headers().allValues("Set-Cookie").stream().filter(c -> c.startsWith(ServerDashboard.SESSION + "="))
                .findFirst().orElseThrow(() -> new AssertionError("no session cookie set: " + r.headers().map()));
        assertTrue(set.startsWith(ServerDashboard.SESSION + "=;") && set.contains("Max-Age=0")
                && set.contains("Path=/dashboard"), set);
    }

    private static String cookie(HttpResponse<?> r, String name) {
        for (String c : r.headers().allValues("Set-Cookie")) {
            if (c.startsWith(name + "=")) {
                assertTrue(c.contains("HttpOnly") && c.contains("Secure") && c.contains("SameSite=Lax"), c);
                return c.substring(0, c.indexOf(';'));
            }
        }
        throw new AssertionError("no cookie " + name + " in " + r.headers().allValues("Set-Cookie"));
    }

    static void stubUser(GitHubRig rig, String login, String repo) {
        String token = "gho_" + login;
        rig.wiremock.stubFor(post(urlPathEqualTo("/login/oauth/access_token")).withRequestBody(containing("code=code-"
                + login)).willReturn(okJson("{\"access_token\":\"" + token + "\",\"token_type\":\"bearer\",\"scope\":\"\"}")));
        rig.wiremock.stubFor(get(urlPathEqualTo("/user")).withHeader("Authorization", equalTo("Bearer " + token))
                .willReturn(okJson("{\"login\":\"" + login + "\",\"id\":" + Math.abs(login.hashCode())
                        + ",\"type\":\"User\",\"site_admin\":false}")));
        rig.wiremock.stubFor(get(urlPathEqualTo("/user/installations")).withHeader("Authorization", equalTo("Bearer "
                + token)).willReturn(okJson("{\"total_count\":1,\"installations\":[{\"id\":1,\"account\":{\"login\":"
                + "\"Codertocat\",\"type\":\"User\"},\"app_id\":" + GitHubRig.APP_ID + ",\"target_type\":\"User\"}]}")));
        rig.wiremock.stubFor(get(urlPathEqualTo("/user/installations/1/repositories")).withHeader("Authorization",
                equalTo("Bearer " + token)).willReturn(okJson("{\"total_count\":1,\"repositories\":[{\"id\":1296269,"
                + "\"name\":\"" + repo.substring(repo.indexOf('/') + 1) + "\",\"full_name\":\"" + repo
                + "\",\"private\":true}]}")));
    }

    /** Signs in as {@code login} through the whole flow; the session cookie. */
    private String signIn(int port, String login) throws Exception {
        HttpResponse<String> start = fetch(port, "/dashboard", null);
        assertEquals(302, start.statusCode());
        String location = start.headers().firstValue("Location").orElseThrow();
        Matcher state = Pattern.compile("[?&]state=([^&]+)").matcher(location);
        assertTrue(state.find(), location);
        String s = URLDecoder.decode(state.group(1), StandardCharsets.UTF_8);
        HttpResponse<String> back = fetch(port, "/dashboard/callback?code=code-" + login + "&state=" + state.group(1),
                cookie(start, ServerDashboard.STATE));
        assertEquals(302, back.statusCode(), back.body());
        assertEquals("/dashboard", back.headers().firstValue("Location").orElseThrow());
        assertFalse(s.isBlank());
        return cookie(back, ServerDashboard.SESSION);
    }

    @Test
    void eachUserSeesOnlyTheRepositoriesGitHubSaysTheyCanRead() throws Exception {
        try (GitHubRig rig = new GitHubRig(dir.resolve("data"), MutableClock.at("2026-03-02T09:00:00Z"))
                .oauth("Iv1.abc123", "client-secret-1")) {
            int port = rig.start().port();
            assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which DB?")).status());
            new dev.agentx.clarify.store.files.FileRepositoryRecords(rig.data).put(
                    new dev.agentx.clarify.store.RepositoryRecords.Repository(WIDGETS.id(), WIDGETS.owner(),
                            WIDGETS.name(), rig.clock.instant(), 1, null, null));
            LocalMode widgets = new LocalMode(WIDGETS.rootIn(rig.data), rig.clock, rig.locks(), new HumanChannel());
            widgets.engine().execute(new ClarifyCommand.Ask(5, "engineer", "architect", null, "Widget size?", true,
                    List.of(), null));
            stubUser(rig, "alice", GitHubRig.REPO.fullName());
            stubUser(rig, "bob", WIDGETS.fullName());

            // without a session: to GitHub's authorize page, with our client id and callback
            HttpResponse<String> anonymous = fetch(port, "/dashboard", null);
            assertEquals(302, anonymous.statusCode());
            String location = anonymous.headers().firstValue("Location").orElseThrow();
            assertTrue(location.startsWith(rig.wiremock.baseUrl() + "/login/oauth/authorize?client_id=Iv1.abc123&"
                    + "redirect_uri=http%3A%2F%2F127.0.0.1%3A" + port + "%2Fdashboard%2Fcallback&state="), location);
            assertEquals(302, fetch(port, "/dashboard/Codertocat/Hello-World", null).statusCode());

            String alice = signIn(port, "alice");
            rig.wiremock.verify(postRequestedFor(urlPathEqualTo("/login/oauth/access_token"))
                    .withRequestBody(containing("client_secret=client-secret-1")));
            HttpResponse<String> index = fetch(port, "/dashboard", alice);
            assertEquals(200, index.statusCode());
            assertTrue(index.body().contains("alice") && index.body().contains("/dashboard/Codertocat/Hello-World"),
                    index.body());
            assertFalse(index.body().contains("acme/widgets"), index.body());
            HttpResponse<String> page = fetch(port, "/dashboard/Codertocat/Hello-World", alice);
            assertEquals(200, page.statusCode());
            assertTrue(page.body().contains("CLR-1-001"), page.body());
            assertTrue(page.body().contains("href=\"" + rig.wiremock.baseUrl() + "/Codertocat/Hello-World/issues/1\""),
                    "issues link to GitHub");
            assertTrue(page.headers().firstValue("Content-Security-Policy").isPresent());
            // the question's thread entry links to the comment the App posted for it (GitHub gave it id 777)
            assertTrue(page.body().contains("href=\"" + rig.wiremock.baseUrl()
                    + "/Codertocat/Hello-World/issues/1#issuecomment-777\""), page.body());
            assertEquals(200, fetch(port, "/dashboard/Codertocat/Hello-World/live", alice).statusCode());
            HttpResponse<String> notHers = fetch(port, "/dashboard/acme/widgets", alice);
            assertEquals(404, notHers.statusCode());
            assertFalse(notHers.body().contains("Widget size?"));
            assertEquals(404, fetch(port, "/dashboard/acme/widgets/live", alice).statusCode());

            String bob = signIn(port, "bob");
            assertTrue(fetch(port, "/dashboard/acme/widgets", bob).body().contains("CLR-5-001"));
            assertEquals(404, fetch(port, "/dashboard/Codertocat/Hello-World", bob).statusCode());
            assertFalse(fetch(port, "/dashboard", bob).body().contains("Hello-World"));
        }
    }

    /**
     * A link to a repository's page signs in and comes back to that page; the owner and repository
     * names are matched in any case, as on GitHub.
     */
    @Test
    void aSignInFromARepositorysPageReturnsToItAndNamesMatchInAnyCase() throws Exception {
        try (GitHubRig rig = new GitHubRig(dir.resolve("data"), MutableClock.at("2026-03-02T09:00:00Z"))
                .oauth("Iv1.abc123", "client-secret-1")) {
            int port = rig.start().port();
            assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which DB?")).status());
            stubUser(rig, "alice", GitHubRig.REPO.fullName());

            HttpResponse<String> start = fetch(port, "/dashboard/Codertocat/Hello-World", null);
            assertEquals(302, start.statusCode());
            Matcher state = Pattern.compile("[?&]state=([^&]+)").matcher(start.headers().firstValue("Location")
                    .orElseThrow());
            assertTrue(state.find());
            HttpResponse<String> back = fetch(port, "/dashboard/callback?code=code-alice&state=" + state.group(1),
                    cookie(start, ServerDashboard.STATE));
            assertEquals(302, back.statusCode(), back.body());
            assertEquals("/dashboard/Codertocat/Hello-World", back.headers().firstValue("Location").orElseThrow());

            String alice = cookie(back, ServerDashboard.SESSION);
            HttpResponse<String> lower = fetch(port, "/dashboard/codertocat/hello-world", alice);
            assertEquals(200, lower.statusCode(), lower.body());
            assertTrue(lower.body().contains("CLR-1-001"), lower.body());
        }
    }

    @Test
    void tamperedCookiesAndForgedSignInsAreRefused() throws Exception {
        try (GitHubRig rig = new GitHubRig(dir.resolve("data"), MutableClock.at("2026-03-02T09:00:00Z"))
                .oauth("Iv1.abc123", "client-secret-1")) {
            int port = rig.start().port();
            rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which DB?"));
            stubUser(rig, "alice", GitHubRig.REPO.fullName());
            String alice = signIn(port, "alice");
            assertEquals(200, fetch(port, "/dashboard/Codertocat/Hello-World", alice).statusCode());

            String value = alice.substring(alice.indexOf('=') + 1);
            String[] parts = value.split("\\.");
            String otherId = ServerDashboard.SESSION + "=" + SignedCookies.random() + "." + parts[1] + "." + parts[2];
            String longer = ServerDashboard.SESSION + "=" + parts[0] + "." + (Long.parseLong(parts[1]) + 86400) + "."
                    + parts[2];
            String badSig = ServerDashboard.SESSION + "=" + parts[0] + "." + parts[1] + "."
                    + (parts[2].charAt(0) == 'A' ? 'B' : 'A') + parts[2].substring(1);
            // differs from the real cookie only in the case of one letter, sent right after it on the same
            // connection: Jetty's header cache must not hand the previous, real value to the server
            String caseFlipped = ServerDashboard.SESSION + "=" + parts[0] + "." + parts[1] + "." + flipCase(parts[2]);
            String cut = ServerDashboard.SESSION + "=" + parts[0];
            for (String forged : List.of(otherId, longer, badSig, caseFlipped, cut)) {
                assertEquals(200, fetch(port, "/dashboard", alice).statusCode());
                assertEquals(302, fetch(port, "/dashboard", forged).statusCode(), forged);
                assertEquals(302, fetch(port, "/dashboard/Codertocat/Hello-World", forged).statusCode(), forged);
            }
            // a callback this browser did not start (no or another state cookie) is refused
            HttpResponse<String> start = fetch(port, "/dashboard", null);
            String stateCookie = cookie(start, ServerDashboard.STATE);
            assertEquals(400, fetch(port, "/dashboard/callback?code=code-alice&state=made-up", stateCookie).statusCode());
            assertEquals(400, fetch(port, "/dashboard/callback?code=code-alice&state=made-up", null).statusCode());
            // the pages only read: any other method is refused as such, whoever asks
            HttpResponse<String> post = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                    + "/dashboard/Codertocat/Hello-World")).header("Cookie", alice)
                    .POST(HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(405, post.statusCode());
            assertEquals("GET", post.headers().firstValue("Allow").orElse(""));
        }
    }

    @Test
    void signingOutEndsTheSessionForTheCookieWhereverItWasCopied() throws Exception {
        try (GitHubRig rig = new GitHubRig(dir.resolve("data"), MutableClock.at("2026-03-02T09:00:00Z"))
                .oauth("Iv1.abc123", "client-secret-1")) {
            int port = rig.start().port();
            assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which DB?")).status());
            stubUser(rig, "alice", GitHubRig.REPO.fullName());
            String alice = signIn(port, "alice");
            HttpResponse<String> index = fetch(port, "/dashboard", alice);
            assertTrue(index.body().contains("<form method=\"post\" action=\"/dashboard/sign-out\">"), index.body());
            assertTrue(index.headers().firstValue("Content-Security-Policy").orElseThrow().contains("form-action 'self'"),
                    "the browser may send the form");
            HttpResponse<String> page = fetch(port, "/dashboard/Codertocat/Hello-World", alice);
            assertTrue(page.body().contains("action=\"/dashboard/sign-out\"") && page.body().contains("href=\"/dashboard\""),
                    "a repository's page offers it too, and the way back to the list");

            HttpResponse<String> out = signOut(port, alice);
            assertEquals(303, out.statusCode(), out.body());
            assertEquals("/dashboard/signed-out", out.headers().firstValue("Location").orElseThrow());
            assertCleared(out);
            // the same cookie sent again (kept by the browser, or copied) signs nobody in any more
            assertEquals(302, fetch(port, "/dashboard", alice).statusCode());
            assertEquals(302, fetch(port, "/dashboard/Codertocat/Hello-World", alice).statusCode());
            HttpResponse<String> bye = fetch(port, "/dashboard/signed-out", null);
            assertEquals(200, bye.statusCode());
            assertTrue(bye.body().contains("signed out") && bye.body().contains("href=\"/dashboard\""), bye.body());

            // without a session (another site's form sends no cookie: SameSite=Lax) it only clears the cookie
            HttpResponse<String> none = signOut(port, null);
            assertEquals(303, none.statusCode());
            assertCleared(none);
            assertEquals(405, fetch(port, "/dashboard/sign-out", null).statusCode(), "a GET signs nobody out");
            // and a new sign-in works as before
            assertEquals(200, fetch(port, "/dashboard", signIn(port, "alice")).statusCode());
        }
    }

    /** {@code s} with the case of its first letter flipped. */
    private static String flipCase(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isLetter(c)) {
                char f = Character.isUpperCase(c) ? Character.toLowerCase(c) : Character.toUpperCase(c);
                return s.substring(0, i) + f + s.substring(i + 1);
            }
        }
        throw new AssertionError("no letter in " + s);
    }

    /** A server with the dashboard on the database {@code database}, one of several replicas. */
    private GitHubRig replica(String data, String database, MutableClock clock) {
        return new GitHubRig(dir.resolve(data), clock).database(database).oauth("Iv1.abc123", "client-secret-1");
    }

    @Test
    void onPostgresEachReplicasDashboardLinksTheCommentsAnyReplicaPosted() throws Exception {
        String database = TestPostgres.newDatabase().url();
        MutableClock clock = MutableClock.at("2026-03-02T09:00:00Z");
        try (GitHubRig a = replica("data-a", database, clock); GitHubRig b = replica("data-b", database, clock)) {
            a.start();
            int port = b.start().port();
            assertEquals(202, a.deliver("issue_comment", a.comment("eng", 1, "/clarify @architect Which DB?")).status());
            assertEquals(1, a.comments(1).size(), "replica a posted the question (GitHub gave it id 777)");
            stubUser(b, "alice", GitHubRig.REPO.fullName());
            HttpResponse<String> page = fetch(port, "/dashboard/Codertocat/Hello-World", signIn(port, "alice"));
            assertEquals(200, page.statusCode());
            assertTrue(page.body().contains("CLR-1-001"), page.body());
            assertTrue(page.body().contains("/Codertocat/Hello-World/issues/1#issuecomment-777\""), page.body());
            assertEquals(List.of(), b.comments(1), "replica b posted nothing");
        }
    }

    @Test
    void onPostgresASessionSignedInOnOneReplicaIsKnownToTheOtherAndOutlivesARestart() throws Exception {
        String database = TestPostgres.newDatabase().url();
        MutableClock clock = MutableClock.at("2026-03-02T09:00:00Z");
        try (GitHubRig a = replica("data-a", database, clock); GitHubRig b = replica("data-b", database, clock)) {
            int portA = a.start().port();
            int portB = b.start().port();
            assertEquals(202, a.deliver("issue_comment", a.comment("eng", 1, "/clarify @architect Which DB?")).status());
            stubUser(a, "alice", GitHubRig.REPO.fullName());
            String alice = signIn(portA, "alice");
            HttpResponse<String> onB = fetch(portB, "/dashboard/Codertocat/Hello-World", alice);
            assertEquals(200, onB.statusCode(), "signed in on a, known on b");
            assertTrue(onB.body().contains("CLR-1-001"), onB.body());
            int restarted = b.start().port();
            assertEquals(200, fetch(restarted, "/dashboard/Codertocat/Hello-World", alice).statusCode(),
                    "and after a restart");
            // signed out on b: a's dashboard no longer knows the session either
            String second = signIn(portA, "alice");
            assertEquals(303, signOut(restarted, second).statusCode());
            assertEquals(302, fetch(portA, "/dashboard/Codertocat/Hello-World", second).statusCode(),
                    "signed out on every replica");
            assertEquals(200, fetch(portA, "/dashboard/Codertocat/Hello-World", alice).statusCode(),
                    "another session of the same user stays");
            clock.advance(ServerDashboard.SESSION_TIME.plusMinutes(1));
            assertEquals(302, fetch(restarted, "/dashboard/Codertocat/Hello-World", alice).statusCode(),
                    "until it expires");
        }
    }

    @Test
    void withoutTheAppsOAuthCredentialsThereIsNoDashboard() throws Exception {
        try (GitHubRig rig = new GitHubRig(dir.resolve("data"), MutableClock.at("2026-03-02T09:00:00Z"))) {
            int port = rig.start().port();
            assertEquals(404, fetch(port, "/dashboard", null).statusCode());
        }
    }
}
