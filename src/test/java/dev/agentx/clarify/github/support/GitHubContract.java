package dev.agentx.clarify.github.support;

import com.atlassian.oai.validator.OpenApiInteractionValidator;
import com.atlassian.oai.validator.model.Request;
import com.atlassian.oai.validator.model.SimpleRequest;
import com.atlassian.oai.validator.report.LevelResolver;
import com.atlassian.oai.validator.report.ValidationReport;
import java.nio.file.Path;

/**
 * GitHub's contract as its REST description states it, for the operations and webhooks the App
 * uses ({@code src/test/resources/contract/github-rest.json}, written by {@code
 * src/test/contract/extract.py}): whether a request's method and path exist, and its parameters
 * and body are valid. Responses are not checked (WireMock's are the tests' own).
 */
public final class GitHubContract {
    public static final Path DESCRIPTION = Path.of("src/test/resources/contract/github-rest.json");
    private final OpenApiInteractionValidator validator = OpenApiInteractionValidator
            .createForSpecificationUrl(DESCRIPTION.toUri().toString())
            .withLevelResolver(LevelResolver.create()
                    .withLevel("validation.response", ValidationReport.Level.IGNORE)
                    // the App's token goes in the Authorization header, which the description leaves out
                    .withLevel("validation.request.security", ValidationReport.Level.IGNORE)
                    .build())
            .build();

    /** What is wrong with {@code method path} (with its query) carrying {@code body} (JSON, or null); empty when nothing. */
    public String check(String method, String pathAndQuery, String body) {
        int q = pathAndQuery.indexOf('?');
        String path = q < 0 ? pathAndQuery : pathAndQuery.substring(0, q);
        SimpleRequest.Builder b = new SimpleRequest.Builder(Request.Method.valueOf(method), path);
        if (q >= 0) {
            for (String pair : pathAndQuery.substring(q + 1).split("&")) {
                int eq = pair.indexOf('=');
                String name = java.net.URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq),
                        java.nio.charset.StandardCharsets.UTF_8);
                String value = eq < 0 ? "" : java.net.URLDecoder.decode(pair.substring(eq + 1),
                        java.nio.charset.StandardCharsets.UTF_8);
                b.withQueryParam(name, value);
            }
        }
        if (body != null && !body.isEmpty()) {
            b.withContentType("application/json").withBody(body);
        }
        ValidationReport report = validator.validateRequest(b.build());
        StringBuilder out = new StringBuilder();
        report.getMessages().stream().filter(m -> m.getLevel() == ValidationReport.Level.ERROR)
                .forEach(m -> out.append(out.isEmpty() ? "" : "; ").append(m.getKey()).append(": ")
                        .append(m.getMessage()));
        return out.toString();
    }
}
