package dev.agentx.clarify.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.dashboard.DashboardServer;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.support.HeadlessChromium;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestRoot;
import dev.agentx.clarify.support.Workflows;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * {@code agentx dashboard} in a real browser: headless Chromium (Debian's chromium and
 * chromium-driver packages, which .ci/run installs) over a project with agents, an active
 * deadlock and an escalation. It checks what a person sees, opens a thread with the keyboard,
 * changes a ledger through the CLI and sees the page follow without a reload. Screenshots go to
 * target/dashboard-screenshots/.
 */
class DashboardBrowserTest {
    @TempDir
    Path dir;

    private TestRoot root;
    private DashboardServer server;
    private WebDriver browser;

    @BeforeEach
    void setUp() throws IOException {
        HeadlessChromium.assumeInstalled();
        root = new TestRoot(dir.resolve("shop"), MutableClock.at("2026-03-02T09:00:00Z"));
        Workflows.mesh(root);
        LocalMode local = root.local();
        // a deadlock: the engineer and the architect each wait on the other (written through the
        // engine, with no monitor pass, so it is still there when the page is opened)
        local.engine().execute(new ClarifyCommand.Ask(7, "engineer", "architect", "Token format", "JWT or opaque tokens?",
                true, List.of(), null));
        local.engine().execute(new ClarifyCommand.Ask(7, "architect", "engineer", "Load", "Expected requests per second?",
                true, List.of(), null));
        // an escalation waiting for a person
        local.engine().execute(new ClarifyCommand.Ask(8, "product-manager", "architect", "Dark mode", "Dark mode in v1?",
                false, List.of(), null));
        local.engine().execute(new ClarifyCommand.Escalate("CLR-8-001", "product-manager", "Needs the product owner"));
        // an answered question with options
        local.engine().execute(new ClarifyCommand.Ask(9, "reviewer", "engineer", "Retries", "Retry how often?",
                false, List.of("Never", "Three times"), null));
        local.engine().execute(new ClarifyCommand.Answer("CLR-9-001", "engineer", "Three times, with backoff", 1));
        root.clock.advance(Duration.ofMinutes(40)); // past the 30-minute SLA: overdue rows

        server = new DashboardServer(DashboardCommand.snapshots(root.local()), local.files().ledgers().directory(),
                List.of(root.state().resolve("agent-status.json"), root.state().resolve("events.jsonl")))
                .start("127.0.0.1", 0);
        browser = HeadlessChromium.start(dir.resolve("chromium-profile"), 1280, 1700);
    }

    @AfterEach
    void tearDown() {
        if (browser != null) {
            browser.quit();
        }
        if (server != null) {
            server.close();
        }
    }

    private String url() {
        return "http://127.0.0.1:" + server.port() + "/";
    }

    private void shot(String name) throws IOException {
        HeadlessChromium.shot(browser, name);
    }

    private WebDriverWait waiting() {
        return new WebDriverWait(browser, Duration.ofSeconds(30));
    }

    @Test
    void aPersonSeesTheDeadlockTheEscalationAndTheThreadsAndThePageFollowsChanges() throws Exception {
        browser.get(url());
        assertEquals("shop - AgentX Clarify", browser.getTitle());

        // the deadlock: named, highlighted in the graph and in the agents' table
        WebElement deadlock = browser.findElement(By.cssSelector("#graph .deadlock"));
        assertTrue(deadlock.getText().matches("(?s)Deadlock: (architect -> engineer -> architect|engineer -> architect "
                + "-> engineer).*"), deadlock.getText());
        assertEquals(2, browser.findElements(By.cssSelector("#graph line.edge.cycle")).size());
        assertEquals(2, browser.findElements(By.cssSelector("#graph g.node.cycle")).size());
        assertEquals("rgb(179, 38, 30)", browser.findElement(By.cssSelector("#graph line.edge.cycle"))
                .getCssValue("stroke"), "deadlocked edges are drawn red");
        assertTrue(browser.findElement(By.cssSelector("tr[data-agent='engineer']")).getAttribute("class")
                .contains("deadlocked"));

        // the escalation, with what it is about and the command that settles it
        WebElement escalation = browser.findElement(By.cssSelector("tr[data-escalation='CLR-8-001']"));
        assertTrue(escalation.getText().contains("Needs the product owner"), escalation.getText());
        assertTrue(escalation.getText().contains("agentx clarify resolve CLR-8-001 -m \"<decision>\""),
                escalation.getText());

        // open clarifications with round, age and SLA: 40 minutes on a 30-minute SLA is overdue
        WebElement row = browser.findElement(By.cssSelector("tr[data-thread-row='CLR-7-001']"));
        assertTrue(row.getText().contains("1 of 5"), row.getText());
        assertTrue(row.getText().contains("overdue 10m"), row.getText());
        shot("overview");

        // the digest's charts: requests per day, rounds used, top topics
        WebElement digest = browser.findElement(By.id("digest"));
        assertTrue(digest.getText().contains("Requests per day"), digest.getText());
        assertEquals(3, digest.findElements(By.cssSelector("figure")).size());
        ((JavascriptExecutor) browser).executeScript("arguments[0].scrollIntoView()", digest);
        shot("digest");

        // a thread opened with the keyboard shows the whole exchange and the option chosen
        WebElement summary = browser.findElement(By.cssSelector("details[data-thread='CLR-9-001'] summary"));
        summary.sendKeys(Keys.ENTER);
        WebElement thread = browser.findElement(By.cssSelector("details[data-thread='CLR-9-001']"));
        assertTrue(thread.getAttribute("open") != null, "the thread opened");
        assertTrue(thread.getText().contains("Retry how often?"), thread.getText());
        assertTrue(thread.getText().contains("Three times, with backoff"), thread.getText());
        assertTrue(thread.getText().contains("Chose 2) Three times"), thread.getText());
        ((JavascriptExecutor) browser).executeScript("arguments[0].scrollIntoView()", thread);
        shot("thread");

        // a change through the CLI: the page follows without a reload, the open thread stays open
        ((JavascriptExecutor) browser).executeScript("window.notReloaded = true");
        TestRoot.Run ask = root.cli("clarify", "ask", "--issue", "10", "--from", "engineer", "--to", "product-manager",
                "Which locales ship first?");
        assertEquals(0, ask.code(), ask.err());
        waiting().until(d -> !d.findElements(By.cssSelector("tr[data-thread-row='CLR-10-001']")).isEmpty());
        assertEquals(Boolean.TRUE, ((JavascriptExecutor) browser).executeScript("return window.notReloaded === true"));
        // the page may render again meanwhile (the command's monitor pass is a second change): the thread is
        // found anew each time, and must be open in what the page shows
        waiting().ignoring(org.openqa.selenium.StaleElementReferenceException.class).until(d ->
                d.findElement(By.cssSelector("details[data-thread='CLR-9-001']")).getAttribute("open") != null);
        // that command's monitor pass broke the deadlock: it is gone, and its victim waits for a person
        waiting().until(d -> d.findElements(By.cssSelector("#graph .deadlock")).isEmpty());
        assertFalse(browser.findElements(By.cssSelector("#escalations tr[data-escalation]")).size() < 2);
        ((JavascriptExecutor) browser).executeScript("window.scrollTo(0, 0)");
        shot("updated");

        // a phone's width: nothing wider than the screen but the tables' own scrolling
        browser.manage().window().setSize(new Dimension(390, 1600));
        Object overflow = ((JavascriptExecutor) browser).executeScript(
                "return document.documentElement.scrollWidth <= window.innerWidth + 1");
        assertEquals(Boolean.TRUE, overflow, "the page fits a phone's width");
        shot("phone");
    }

    @Test
    void anotherHostNameIsRefusedAndNothingButTheAssetsIsServed() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        HttpResponse<String> ok = http.send(HttpRequest.newBuilder(URI.create(url())).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, ok.statusCode());
        assertTrue(ok.headers().firstValue("Content-Security-Policy").orElse("").contains("default-src 'none'"));
        // a page of another site that rebinds its name to 127.0.0.1 sends its own name as Host
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", server.port())) {
            s.getOutputStream().write(("GET / HTTP/1.1\r\nHost: attacker.example\r\nConnection: close\r\n\r\n")
                    .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            String answer = new String(s.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII);
            assertTrue(answer.startsWith("HTTP/1.1 403"), answer);
        }
        HttpResponse<String> other = http.send(HttpRequest.newBuilder(URI.create(url() + "assets/../../pom.xml")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertTrue(other.statusCode() == 404 || other.statusCode() == 400, String.valueOf(other.statusCode()));
        // a new client: the refusal above may close its connection
        HttpResponse<String> post = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url()))
                .POST(HttpRequest.BodyPublishers.ofString("x")).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(405, post.statusCode(), "the page is read only");
        assertEquals("GET", post.headers().firstValue("Allow").orElse(""));
    }
}
