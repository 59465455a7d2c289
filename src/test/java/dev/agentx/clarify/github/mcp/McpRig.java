package dev.agentx.clarify.github.mcp;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathEqualTo;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathMatching;

import dev.agentx.clarify.github.GitHubMode;
import dev.agentx.clarify.github.support.GitHubRig;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.Map;

/** What the /mcp tests share: GitHub's answers for user tokens and installations, and an MCP client over HTTP. */
final class McpRig {
    /** The App's installation on the rig's repository, as GET /repos/OWNER/NAME/installation answers. */
    static final long INSTALLATION = 31;

    private McpRig() {
    }

    /** {@code token} is {@code login}'s: GET /user answers as GitHub does for it; any other token is refused (401). */
    static void user(GitHubRig rig, String token, String login) {
        rig.wiremock.stubFor(get(urlPathEqualTo("/user")).withHeader("Authorization", equalTo("Bearer " + token))
                .atPriority(1).willReturn(okJson("{\"login\":\"" + login + "\",\"id\":" + Math.abs(login.hashCode())
                        + ",\"node_id\":\"U_kgDO\",\"type\":\"User\",\"site_admin\":false}")));
    }

    /** GitHub's answers besides the rig's own: unknown tokens, and the App installed on the rig's repository only. */
    static void stub(GitHubRig rig) {
        rig.wiremock.stubFor(get(urlPathEqualTo("/user")).atPriority(10).willReturn(aResponse().withStatus(401)
                .withHeader("Content-Type", "application/json").withBody("{\"message\":\"Bad credentials\","
                        + "\"documentation_url\":\"https://docs.github.com/rest\",\"status\":\"401\"}")));
        rig.wiremock.stubFor(get(urlPathMatching("/repos/[^/]+/[^/]+/installation")).atPriority(10)
                .willReturn(aResponse().withStatus(404).withHeader("Content-Type", "application/json")
                        .withBody("{\"message\":\"Not Found\",\"documentation_url\":\"https://docs.github.com/rest/apps"
                                + "/apps#get-a-repository-installation-for-the-authenticated-app\",\"status\":\"404\"}")));
        rig.wiremock.stubFor(get(urlPathEqualTo(GitHubRig.API_REPO + "/installation")).atPriority(1)
                .willReturn(okJson("{\"id\":" + INSTALLATION + ",\"account\":{\"login\":\"Codertocat\"},"
                        + "\"app_id\":" + GitHubRig.APP_ID + ",\"target_type\":\"User\",\"permissions\":{\"issues\":"
                        + "\"write\"},\"events\":[\"issue_comment\",\"issues\"]}")));
    }

    /** The Java SDK's MCP client over Streamable HTTP to {@code mode}'s /mcp with {@code token}, initialized. */
    static McpSyncClient client(GitHubMode mode, String token) {
        HttpClientStreamableHttpTransport transport = HttpClientStreamableHttpTransport
                .builder("http://127.0.0.1:" + mode.port()).endpoint("/mcp")
                .requestBuilder(HttpRequest.newBuilder().header("Authorization", "Bearer " + token)).build();
        McpSyncClient client = McpClient.sync(transport).requestTimeout(Duration.ofSeconds(120))
                .initializationTimeout(Duration.ofSeconds(30)).build();
        client.initialize();
        return client;
    }

    static McpSchema.CallToolResult call(McpSyncClient client, String tool, Map<String, Object> args) {
        return client.callTool(new McpSchema.CallToolRequest(tool, args));
    }

    static String text(McpSchema.CallToolResult r) {
        return ((McpSchema.TextContent) r.content().get(0)).text();
    }
}
