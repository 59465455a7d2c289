package dev.agentx.clarify.github.setup;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.wireMockConfig;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import dev.agentx.clarify.cli.Main;
import dev.agentx.clarify.github.support.Keys;
import dev.agentx.clarify.github.support.RequestJournal;
import dev.agentx.clarify.support.Jvm;
import dev.agentx.clarify.support.ProcessLog;
import java.io.IOException;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code agentx setup} as a user runs it, a real process against WireMock playing GitHub: the page
 * posts the filled-in manifest to GitHub's form, the callback's code is exchanged, the credentials
 * are written with mode 0600, and {@code agentx serve} then starts from the data dir alone.
 */
class SetupFlowTest {
    static final Duration DEADLINE = Duration.ofSeconds(60);
    static final Pattern PAGE = Pattern.compile("agentx setup: open (http://127\\.0\\.0\\.1:\\d+/)");
    static final Pattern FORM = Pattern.compile("<form action=\"([^\"]+)\" method=\"post\">");
    static final Pattern MANIFEST = Pattern.compile("name=\"manifest\" value=\"([^\"]+)\"");

    @TempDir
    Path dir;
    WireMockServer github;
    final HttpClient http = HttpClient.newHttpClient();
    final ObjectMapper json = new ObjectMapper();

    @BeforeEach
    void startGitHub() {
        // the App's requests are kept for the contract check against GitHub's description
        github = new WireMockServer(wireMockConfig().dynamicPort().extensions(new RequestJournal()));
        github.start();
    }

    @AfterEach
    void stopGitHub() {
        github.stop();
    }

    /** GitHub's answer to POST /app-manifests/{code}/conversions: 201 with the App and its secrets. */
    private String conversion() {
        ObjectNode app = json.createObjectNode();
        app.put("id", 424242).put("slug", "acme-clarify").put("node_id", "A_kwHOABCD").put("name", "Acme Clarify");
        app.putObject("owner").put("login", "acme").put("id", 1).put("type", "Organization");
        app.put("description", "clarifications").put("external_url", "https://agentx.example.com")
                .put("html_url", "https://github.com/apps/acme-clarify")
                .put("created_at", "2026-02-26T10:00:00Z").put("updated_at", "2026-02-26T10:00:00Z");
        app.putObject("permissions").put("contents", "read").put("issues", "write").put("members", "read")
                .put("metadata", "read");
        app.putArray("events").add("issue_comment").add("issues");
        app.put("client_id", "Iv1.0123456789abcdef").put("client_secret", "c0ffee" + "0".repeat(34))
                .put("webhook_secret", "whsec-from-github").put("pem", Keys.pkcs1Pem());
        return app.toString();
    }

    private Process setup(Path cwd, Path log, String... args) throws IOException {
        String[] all = new String[args.length + 1];
        all[0] = "setup";
        System.arraycopy(args, 0, all, 1, args.length);
        ProcessBuilder pb = Jvm.builder(Main.class, all).directory(cwd.toFile());
        Map<String, String> env = pb.environment();
        env.remove("JAVA_TOOL_OPTIONS");
        env.keySet().removeIf(k -> k.startsWith("GITHUB_") || k.startsWith("AGENTX_"));
        env.put("GITHUB_API_URL", github.baseUrl());
        return pb.redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    private static String read(Path file) {
        return ProcessLog.read(file);
    }

    private static Matcher await(Process p, Path log, Pattern pattern) throws InterruptedException {
        return ProcessLog.await(p, log, pattern, DEADLINE);
    }

    private HttpResponse<String> get(String url) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String unescape(String html) {
        return html.replace("&quot;", "\"").replace("&#39;", "'").replace("&lt;", "<").replace("&gt;", ">")
                .replace("&amp;", "&");
    }

    @Test
    void registersTheAppWritesPrivateFilesAndServeStartsFromThem() throws Exception {
        github.stubFor(post(urlEqualTo("/app-manifests/code-123/conversions"))
                .willReturn(aResponse().withStatus(201).withHeader("Content-Type", "application/json")
                        .withBody(conversion())));
        Path cwd = Files.createDirectories(dir.resolve("home"));
        Path log = dir.resolve("setup.log");
        Process p = setup(cwd, log, "--url", "https://agentx.example.com", "--port", "0", "--org", "acme");
        try {
            String page = await(p, log, PAGE).group(1);
            String html = get(page).body();
            Matcher form = FORM.matcher(html);
            assertTrue(form.find(), html);
            String action = unescape(form.group(1));
            assertTrue(action.startsWith("https://github.com/organizations/acme/settings/apps/new?state="), action);
            String state = action.substring(action.indexOf("state=") + "state=".length());
            Matcher m = MANIFEST.matcher(html);
            assertTrue(m.find(), html);
            JsonNode manifest = json.readTree(unescape(m.group(1)));
            assertEquals("https://agentx.example.com/api/github/webhooks", manifest.at("/hook_attributes/url").asText());
            assertEquals("https://agentx.example.com", manifest.get("url").asText());
            assertEquals(page + "callback", manifest.get("redirect_url").asText());
            assertEquals("read", manifest.at("/default_permissions/contents").asText());

            HttpResponse<String> forged = get(page + "callback?code=code-123&state=not-" + state);
            assertEquals(400, forged.statusCode());
            assertFalse(Files.exists(cwd.resolve("agentx-data/agentx.env")), "a forged callback writes nothing");
            github.verify(0, postRequestedFor(urlEqualTo("/app-manifests/code-123/conversions")));

            HttpResponse<String> back = get(page + "callback?code=code-123&state="
                    + URLDecoder.decode(state, StandardCharsets.UTF_8));
            assertEquals(200, back.statusCode(), back.body());
            assertTrue(back.body().contains("https://github.com/apps/acme-clarify/installations/new"), back.body());
            assertTrue(p.waitFor(DEADLINE.toSeconds(), TimeUnit.SECONDS), read(log));
            assertEquals(0, p.exitValue(), read(log));
        } finally {
            p.destroyForcibly();
        }
        github.verify(1, postRequestedFor(urlEqualTo("/app-manifests/code-123/conversions")));
        assertTrue(read(log).contains("Install it: https://github.com/apps/acme-clarify/installations/new"), read(log));
        Path data = cwd.resolve("agentx-data");
        for (String f : new String[] {"agentx.env", "github-app.pem"}) {
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(data.resolve(f))), f);
        }
        String env = Files.readString(data.resolve("agentx.env"));
        assertTrue(env.contains("GITHUB_APP_ID=424242\n") && env.contains("GITHUB_WEBHOOK_SECRET=whsec-from-github\n")
                && env.contains("GITHUB_CLIENT_ID=Iv1.0123456789abcdef\n")
                && env.contains("GITHUB_API_URL=" + github.baseUrl() + "\n"), env);
        assertEquals(Keys.pkcs1Pem().strip(), Files.readString(data.resolve("github-app.pem")).strip());

        // agentx serve from the same folder, with no GitHub variable in its environment
        ProcessBuilder pb = Jvm.builder(Main.class, "serve").directory(cwd.toFile());
        pb.environment().remove("JAVA_TOOL_OPTIONS");
        pb.environment().keySet().removeIf(k -> k.startsWith("GITHUB_") || k.startsWith("AGENTX_"));
        pb.environment().put("PORT", "0");
        pb.environment().put("AGENTX_MANAGEMENT_PORT", "0");
        Path serveLog = dir.resolve("serve.log");
        Process serve = pb.redirectErrorStream(true).redirectOutput(serveLog.toFile()).start();
        try {
            Matcher listening = await(serve, serveLog,
                    Pattern.compile("listening on http://0\\.0\\.0\\.0:(\\d+)/api/github/webhooks"));
            String out = read(serveLog);
            assertTrue(out.contains("app id        424242"), out);
            assertTrue(out.contains("env file") && out.contains("GITHUB_APP_ID"), out);
            assertEquals(200, get("http://127.0.0.1:" + listening.group(1) + "/healthz").statusCode());
        } finally {
            serve.destroy();
            serve.waitFor(30, TimeUnit.SECONDS);
            serve.destroyForcibly();
        }
    }

    @Test
    void anExpiredCodeIsAClearErrorAndWritesNothing() throws Exception {
        github.stubFor(post(urlEqualTo("/app-manifests/old/conversions"))
                .willReturn(aResponse().withStatus(404).withHeader("Content-Type", "application/json")
                        .withBody("{\"message\":\"Not Found\",\"documentation_url\":\"https://docs.github.com/rest\"}")));
        Path cwd = Files.createDirectories(dir.resolve("expired"));
        Path log = dir.resolve("expired.log");
        Process p = setup(cwd, log, "--url", "https://agentx.example.com", "--port", "0");
        try {
            String page = await(p, log, PAGE).group(1);
            Matcher form = FORM.matcher(get(page).body());
            assertTrue(form.find());
            String action = unescape(form.group(1));
            assertTrue(action.startsWith("https://github.com/settings/apps/new?state="), action);
            String state = action.substring(action.indexOf("state=") + "state=".length());
            HttpResponse<String> back = get(page + "callback?code=old&state=" + state);
            assertEquals(502, back.statusCode());
            assertTrue(back.body().contains("used or expired"), back.body());
            assertTrue(p.waitFor(DEADLINE.toSeconds(), TimeUnit.SECONDS), read(log));
            assertEquals(1, p.exitValue(), read(log));
        } finally {
            p.destroyForcibly();
        }
        assertTrue(read(log).contains("used or expired"), read(log));
        assertFalse(Files.exists(cwd.resolve("agentx-data/agentx.env")));
        assertFalse(Files.exists(cwd.resolve("agentx-data/github-app.pem")));
    }

    @Test
    void existingCredentialsAreKeptUnlessForced() throws Exception {
        Path cwd = Files.createDirectories(dir.resolve("again"));
        Files.createDirectories(cwd.resolve("agentx-data"));
        Files.writeString(cwd.resolve("agentx-data/agentx.env"), "GITHUB_APP_ID=1\n");
        Path log = dir.resolve("again.log");
        Process p = setup(cwd, log, "--url", "https://agentx.example.com", "--port", "0");
        assertTrue(p.waitFor(DEADLINE.toSeconds(), TimeUnit.SECONDS));
        assertEquals(2, p.exitValue(), read(log));
        assertTrue(read(log).contains("--force"), read(log));
        assertEquals("GITHUB_APP_ID=1\n", Files.readString(cwd.resolve("agentx-data/agentx.env")));
    }

    /**
     * The page carries the registration's state: a page of another site that points its own name
     * at 127.0.0.1 (DNS rebinding) sends that name as Host and is refused, the callback too.
     */
    @Test
    void thePageAnswersOnlyAtItsOwnAddress() throws Exception {
        Path log = dir.resolve("hosts.log");
        Process p = setup(Files.createDirectories(dir.resolve("hosts")), log, "--url", "https://agentx.example.com",
                "--port", "0");
        try {
            URI page = URI.create(await(p, log, PAGE).group(1));
            assertEquals(200, get(page.toString()).statusCode());
            for (String path : new String[] {"/", "/callback?code=x&state=y"}) {
                try (java.net.Socket s = new java.net.Socket("127.0.0.1", page.getPort())) {
                    s.getOutputStream().write(("GET " + path + " HTTP/1.1\r\nHost: attacker.example:" + page.getPort()
                            + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                    String answer = new String(s.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
                    assertTrue(answer.startsWith("HTTP/1.1 403") && !answer.contains("state="), answer);
                }
            }
            assertTrue(p.isAlive(), "the refused callback did not end the setup: " + read(log));
        } finally {
            p.destroyForcibly().waitFor();
        }
    }

    @Test
    void aPortInUseIsAUsageErrorThatSaysWhatToDo() throws Exception {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            Path log = dir.resolve("taken.log");
            Process p = setup(Files.createDirectories(dir.resolve("taken")), log, "--url", "https://agentx.example.com",
                    "--port", String.valueOf(taken.getLocalPort()));
            assertTrue(p.waitFor(DEADLINE.toSeconds(), TimeUnit.SECONDS));
            assertEquals(2, p.exitValue(), read(log));
            assertTrue(read(log).contains("USAGE: Cannot serve the setup page on 127.0.0.1:" + taken.getLocalPort())
                    && read(log).contains("Choose another port with --port"), read(log));
        }
    }

    @Test
    void theManifestCanBePrintedForTheManualPath() throws Exception {
        Path log = dir.resolve("print.log");
        Process p = setup(Files.createDirectories(dir.resolve("print")), log, "--url", "https://h.example.org/",
                "--name", "Clarify Here", "--print-manifest");
        assertTrue(p.waitFor(DEADLINE.toSeconds(), TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), read(log));
        JsonNode m = json.readTree(read(log));
        assertEquals("Clarify Here", m.get("name").asText());
        assertEquals("https://h.example.org/api/github/webhooks", m.at("/hook_attributes/url").asText());
    }
}
