package dev.agentx.clarify.deploy.replicas;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The replicas' webhook as GitHub calls it: signed deliveries POSTed to {@link #url} (the
 * compose recipe's proxy, the Kubernetes Service), each on a connection of its own, as GitHub
 * sends them (a Service balances connections, not requests, so a kept-alive one would take every
 * delivery to one replica).
 */
final class Webhook {
    /** The webhook secret the replicas under check are given. */
    static final String SECRET = "replicas-check-secret";

    private final String repo;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();
    /** Where deliveries go: set by the check once it knows. */
    String url;

    /** Deliveries about {@code repo} ({@code owner/name}). */
    Webhook(String repo) {
        this.repo = repo;
    }

    /** A signed {@code issue_comment} delivery as GitHub sends it; the HTTP status, or -1 when none came. */
    int deliver(String id, int issue) {
        String text = "/clarify @architect Which auth method for issue " + issue + "?";
        String[] ownerName = repo.split("/");
        String body = "{\"action\":\"created\","
                + "\"issue\":{\"number\":" + issue + ",\"title\":\"Check " + issue + "\",\"state\":\"open\","
                + "\"labels\":[],\"user\":{\"login\":\"eng\",\"id\":2,\"type\":\"User\"},\"body\":\"\"},"
                + "\"comment\":{\"id\":" + (100_000 + issue) + ",\"body\":" + JsonText.string(text) + ","
                + "\"user\":{\"login\":\"eng\",\"id\":2,\"type\":\"User\"},\"author_association\":\"MEMBER\"},"
                + "\"repository\":{\"id\":10,\"name\":" + JsonText.string(ownerName[1]) + ",\"full_name\":"
                + JsonText.string(repo) + ","
                + "\"owner\":{\"login\":" + JsonText.string(ownerName[0]) + ",\"id\":1,\"type\":\"Organization\"},"
                + "\"private\":true},"
                + "\"sender\":{\"login\":\"eng\",\"id\":2,\"type\":\"User\"},\"installation\":{\"id\":1}}";
        return post(id, "issue_comment", body);
    }

    /** Posts one signed delivery; the HTTP status, or -1 when none came. */
    int post(String id, String event, String body) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        try {
            HttpRequest request = HttpRequest.newBuilder(URI.create(url))
                    .timeout(Duration.ofSeconds(15))
                    .header("Content-Type", "application/json")
                    .header("Connection", "close")
                    .header("X-GitHub-Event", event)
                    .header("X-GitHub-Delivery", id)
                    .header("X-Hub-Signature-256", "sha256=" + hmac(bytes))
                    .POST(HttpRequest.BodyPublishers.ofByteArray(bytes))
                    .build();
            return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }

    /** Waits until a ping through {@link #url} reaches a replica; {@code through} names what is in between. */
    void waitUntilServed(String through) {
        Instant giveUp = Instant.now().plusSeconds(120);
        while (Instant.now().isBefore(giveUp)) {
            int status = post("check-ping-" + System.nanoTime(), "ping",
                    "{\"zen\":\"Keep it logically awesome.\",\"hook_id\":1}");
            if (status == 200 || status == 202) {
                return;
            }
            RecipeCheck.sleep(1_000);
        }
        throw new IllegalStateException(through + " did not pass a ping to a replica within 2 minutes (" + url + ")");
    }

    private static String hmac(byte[] body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(SECRET.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            return HexFormat.of().formatHex(mac.doFinal(body));
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }
}
