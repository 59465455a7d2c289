package dev.agentx.clarify.github.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.tomakehurst.wiremock.extension.ResponseDefinitionTransformerV2;
import com.github.tomakehurst.wiremock.http.ResponseDefinition;
import com.github.tomakehurst.wiremock.stubbing.ServeEvent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * GitHub's check runs as the Checks API keeps them, for the stubs that name this transformer:
 * {@code POST .../check-runs} creates one (201, its id), {@code PATCH .../check-runs/{id}} changes
 * it, {@code GET .../commits/{ref}/check-runs?check_name=} lists a commit's runs of that name. The
 * runs live as long as the WireMock server, across restarts of the App.
 */
public final class CheckRunsStub implements ResponseDefinitionTransformerV2 {
    public static final String NAME = "github-check-runs";
    private static final Pattern ONE = Pattern.compile(".*/check-runs/(\\d+)");
    private static final Pattern LIST = Pattern.compile(".*/commits/([^/?]+)/check-runs(\\?.*)?");
    private final ObjectMapper json = new ObjectMapper();
    private final AtomicLong ids = new AtomicLong(7000);
    /** The runs by id, as GitHub would answer them. */
    public final Map<Long, ObjectNode> runs = new ConcurrentSkipListMap<>();

    @Override
    public String getName() {
        return NAME;
    }

    @Override
    public boolean applyGlobally() {
        return false;
    }

    @Override
    public ResponseDefinition transform(ServeEvent event) {
        String method = event.getRequest().getMethod().getName();
        String url = event.getRequest().getUrl();
        try {
            if (method.equals("POST")) {
                ObjectNode run = (ObjectNode) json.readTree(event.getRequest().getBodyAsString());
                long id = ids.incrementAndGet();
                run.put("id", id);
                run.put("status", "completed");
                runs.put(id, run);
                return answer(201, run);
            }
            Matcher one = ONE.matcher(url);
            if (method.equals("PATCH") && one.matches()) {
                long id = Long.parseLong(one.group(1));
                ObjectNode run = runs.get(id);
                if (run == null) {
                    return answer(404, json.createObjectNode().put("message", "Not Found"));
                }
                ObjectNode changed = run.deepCopy();
                changed.setAll((ObjectNode) json.readTree(event.getRequest().getBodyAsString()));
                runs.put(id, changed);
                return answer(200, changed);
            }
            Matcher list = LIST.matcher(url);
            if (method.equals("GET") && list.matches()) {
                String name = query(url, "check_name");
                ArrayNode found = json.createArrayNode();
                for (ObjectNode r : runs.values()) {
                    if (r.path("head_sha").asText().equals(list.group(1)) && (name == null
                            || r.path("name").asText().equals(name))) {
                        found.add(r);
                    }
                }
                ObjectNode page = json.createObjectNode().put("total_count", found.size());
                page.set("check_runs", found);
                return answer(200, page);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return answer(404, json.createObjectNode().put("message", "Not Found"));
    }

    private static String query(String url, String name) {
        int q = url.indexOf('?');
        if (q < 0) {
            return null;
        }
        for (String pair : url.substring(q + 1).split("&")) {
            int eq = pair.indexOf('=');
            if (eq > 0 && pair.substring(0, eq).equals(name)) {
                return URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            }
        }
        return null;
    }

    private ResponseDefinition answer(int status, JsonNode body) {
        return com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder.responseDefinition().withStatus(status)
                .withHeader("Content-Type", "application/json; charset=utf-8").withBody(body.toString()).build();
    }

    /** The runs on commit {@code sha}, oldest first. */
    public List<ObjectNode> on(String sha) {
        List<ObjectNode> out = new ArrayList<>();
        runs.values().forEach(r -> {
            if (r.path("head_sha").asText().equals(sha)) {
                out.add(r);
            }
        });
        return out;
    }
}
