import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * An example "http" agent (see README, "Answer channels"), with nothing but the JDK:
 *
 *   AGENT_SECRET=s3cret java examples/agents/HttpAgent.java 8700
 *
 * It listens on 127.0.0.1:PORT (0 picks a free port; the first line printed says which),
 * checks X-Agentx-Signature-256 (sha256= + hex HMAC-SHA256 of the raw body, keyed with
 * $AGENT_SECRET) when AGENT_SECRET is set, and answers every POST with JSON:
 * {"answer": "..."} or {"cannotAnswer": true, "reason": "..."}.
 */
public final class HttpAgent {
    public static void main(String[] args) throws IOException {
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 8700;
        String secret = System.getenv("AGENT_SECRET");
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
        server.createContext("/answer", exchange -> handle(exchange, secret));
        server.start();
        System.out.println("listening on " + server.getAddress().getPort());
        System.out.flush();
    }

    private static void handle(HttpExchange exchange, String secret) throws IOException {
        try (exchange) {
            if (!"POST".equals(exchange.getRequestMethod())) {
                reply(exchange, 405, "{\"error\":\"POST only\"}");
                return;
            }
            byte[] body = exchange.getRequestBody().readAllBytes();
            if (secret != null && !secret.isEmpty()) {
                String got = exchange.getRequestHeaders().getFirst("X-Agentx-Signature-256");
                String want = "sha256=" + hmac(secret, body);
                if (got == null || !MessageDigest.isEqual(want.getBytes(StandardCharsets.US_ASCII),
                        got.getBytes(StandardCharsets.US_ASCII))) {
                    reply(exchange, 401, "{\"error\":\"bad signature\"}");
                    return;
                }
            }
            String question = stringField(new String(body, StandardCharsets.UTF_8), "question").toLowerCase();
            String answer;
            if (question.contains("deadline") || question.contains("release")) {
                answer = "{\"answer\": \"The beta ships at the end of the quarter.\"}";
            } else if (question.contains("users")) {
                answer = "{\"answer\": \"Small teams of 2 to 10 developers.\"}";
            } else {
                answer = "{\"cannotAnswer\": true, \"reason\": \"no product decision on this yet\"}";
            }
            reply(exchange, 200, answer);
        }
    }

    private static void reply(HttpExchange exchange, int status, String json) throws IOException {
        byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    private static String hmac(String secret, byte[] body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            return HexFormat.of().formatHex(mac.doFinal(body));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** The value of a top-level string field of a JSON object (enough for this example; use a JSON library in real agents). */
    static String stringField(String json, String name) {
        int at = json.indexOf("\"" + name + "\"");
        if (at < 0) {
            return "";
        }
        int i = json.indexOf('"', json.indexOf(':', at) + 1) + 1;
        StringBuilder b = new StringBuilder();
        while (i > 0 && i < json.length() && json.charAt(i) != '"') {
            char c = json.charAt(i++);
            if (c == '\\' && i < json.length()) {
                char e = json.charAt(i++);
                switch (e) {
                    case 'n' -> b.append('\n');
                    case 't' -> b.append('\t');
                    case 'u' -> {
                        b.append((char) Integer.parseInt(json.substring(i, i + 4), 16));
                        i += 4;
                    }
                    default -> b.append(e);
                }
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }
}
