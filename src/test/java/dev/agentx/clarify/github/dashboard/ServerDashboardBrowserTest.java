package dev.agentx.clarify.github.dashboard;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.support.HeadlessChromium;
import dev.agentx.clarify.support.MutableClock;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The server's dashboard in a real browser (headless Chromium): signing in through GitHub's OAuth
 * pages (WireMock answers as GitHub does for a user who authorized the App before: straight back to
 * the callback), the list and a repository's page, and signing out with the page's own button,
 * which the pages' Content-Security-Policy must let the browser send. Screenshots go to
 * target/dashboard-screenshots/.
 */
class ServerDashboardBrowserTest {
    @TempDir
    Path dir;

    private WebDriver browser;

    @BeforeEach
    void setUp() throws IOException {
        HeadlessChromium.assumeInstalled();
        browser = HeadlessChromium.start(dir.resolve("chromium-profile"), 1280, 900);
    }

    @AfterEach
    void tearDown() {
        if (browser != null) {
            browser.quit();
        }
    }

    private void shot(String name) throws IOException {
        HeadlessChromium.shot(browser, name);
    }

    /**
     * Also: the server then stops, with the repository page's event stream left behind by the
     * browser (closing it once made Javalin loop on a request that no longer existed, forever).
     */
    @Test
    @Timeout(value = 120, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aPersonSignsInLooksAndSignsOutWithThePagesButton() throws Exception {
        try (GitHubRig rig = new GitHubRig(dir.resolve("data"), MutableClock.at("2026-03-02T09:00:00Z"))
                .oauth("Iv1.abc123", "client-secret-1")) {
            int port = rig.start().port();
            assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which DB?")).status());
            ServerDashboardTest.stubUser(rig, "alice", GitHubRig.REPO.fullName());
            rig.wiremock.stubFor(get(urlPathEqualTo("/login/oauth/authorize")).willReturn(aResponse().withStatus(302)
                    .withHeader("Location", "{{request.query.redirect_uri}}?code=code-alice&state={{request.query.state}}")
                    .withTransformers("response-template")));
            WebDriverWait wait = new WebDriverWait(browser, Duration.ofSeconds(30));
            String base = "http://127.0.0.1:" + port;

            browser.get(base + "/dashboard");
            wait.until(ExpectedConditions.textToBePresentInElementLocated(By.tagName("body"),
                    "Signed in with GitHub as alice"));
            browser.findElement(By.linkText("Codertocat/Hello-World")).click();
            wait.until(ExpectedConditions.textToBePresentInElementLocated(By.tagName("main"), "CLR-1-001"));
            shot("server-repository-signed-in");

            browser.findElement(By.xpath("//button[normalize-space()='Sign out']")).click();
            wait.until(ExpectedConditions.urlToBe(base + "/dashboard/signed-out"));
            assertTrue(browser.findElement(By.tagName("main")).getText().contains("You are signed out"),
                    browser.getPageSource());
            shot("server-signed-out");
            assertTrue(browser.manage().getCookieNamed(ServerDashboard.SESSION) == null, "the cookie is gone");

            // the next visit goes through GitHub's sign-in again (which sends this user straight back)
            rig.wiremock.resetRequests();
            browser.findElement(By.linkText("Sign in again")).click();
            wait.until(ExpectedConditions.textToBePresentInElementLocated(By.tagName("body"),
                    "Signed in with GitHub as alice"));
            rig.wiremock.verify(1, getRequestedFor(urlPathEqualTo("/login/oauth/authorize")));
        }
    }
}
