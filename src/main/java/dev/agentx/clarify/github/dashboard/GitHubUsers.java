package dev.agentx.clarify.github.dashboard;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentx.clarify.files.JsonSupport;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * GitHub's side of "Sign in with GitHub" for the dashboard: the web flow's code exchanged for a
 * user access token, who the user is, and the repositories of the App's installations the user
 * can see, as GitHub decides with the user's token (user-to-server: an installation's
 * repositories the user has at least read access to).
 */
final class GitHubUsers {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final int PAGE = 100;

    private final String webUrl;
    private final String apiUrl;
    private final String clientId;
    private final String clientSecret;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();

    GitHubUsers(String apiUrl, String clientId, String clientSecret) {
        this.apiUrl = apiUrl;
        this.webUrl = webUrlOf(apiUrl);
        this.clientId = clientId;
        this.clientSecret = clientSecret;
    }

    /** github.com for api.github.com; https://HOST for GitHub Enterprise Server's https://HOST/api/v3. */
    static String webUrlOf(String apiUrl) {
        if (apiUrl.equals("https://api.github.com")) {
            return "https://github.com";
        }
        return apiUrl.endsWith("/api/v3") ? apiUrl.substring(0, apiUrl.length() - "/api/v3".length()) : apiUrl;
    }

    String webUrl() {
        return webUrl;
    }

    /** Where the browser goes to sign in. */
    String authorizeUrl(String redirectUri, String state) {
        return webUrl + "/login/oauth/authorize?client_id=" + enc(clientId) + "&redirect_uri=" + enc(redirectUri)
                + "&state=" + enc(state) + "&allow_signup=false";
    }

    /** The user access token for the code GitHub sent back. */
    String token(String code, String redirectUri) throws IOException, InterruptedException {
        String form = "client_id=" + enc(clientId) + "&client_secret=" + enc(clientSecret) + "&code=" + enc(code)
                + "&redirect_uri=" + enc(redirectUri);
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(webUrl + "/login/oauth/access_token"))
                .timeout(TIMEOUT).header("Accept", "application/json")
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form)).build(), HttpResponse.BodyHandlers.ofString());
        JsonNode body = JsonSupport.shared().readTree(r.body());
        String token = body.path("access_token").asText("");
        if (r.statusCode() != 200 || token.isEmpty()) {
            throw new IOException("GitHub did not give a token for the sign-in (" + r.statusCode() + " "
                    + body.path("error").asText("") + ": " + body.path("error_description").asText("") + ")");
        }
        return token;
    }

    /** The login of the token's user. */
    String login(String token) throws IOException, InterruptedException {
        return get(token, "/user").path("login").asText();
    }

    /** owner/name of every repository of the App's installations that the user can see. */
    Set<String> repositories(String token) throws IOException, InterruptedException {
        Set<String> out = new LinkedHashSet<>();
        for (int page = 1; page < 100; page++) {
            JsonNode installations = get(token, "/user/installations?per_page=" + PAGE + "&page=" + page)
                    .path("installations");
            for (JsonNode i : installations) {
                long id = i.path("id").asLong();
                for (int rp = 1; rp < 1000; rp++) {
                    JsonNode repos = get(token, "/user/installations/" + id + "/repositories?per_page=" + PAGE
                            + "&page=" + rp).path("repositories");
                    repos.forEach(repo -> out.add(repo.path("full_name").asText()));
                    if (repos.size() < PAGE) {
                        break;
                    }
                }
            }
            if (installations.size() < PAGE) {
                break;
            }
        }
        return out;
    }

    private JsonNode get(String token, String path) throws IOException, InterruptedException {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(apiUrl + path)).timeout(TIMEOUT)
                .header("Accept", "application/vnd.github+json").header("Authorization", "Bearer " + token)
                .header("X-GitHub-Api-Version", "2022-11-28").GET().build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException("GET " + path + " with the user's token answered " + r.statusCode());
        }
        return JsonSupport.shared().readTree(r.body());
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
