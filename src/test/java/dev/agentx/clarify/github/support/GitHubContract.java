package dev.agentx.clarify.github.support;

import com.atlassian.oai.validator.OpenApiInteractionValidator;
import com.atlassian.oai.validator.model.Request;
import com.atlassian.oai.validator.model.SimpleRequest;
import com.atlassian.oai.validator.report.LevelResolver;
import com.atlassian.oai.validator.report.ValidationReport;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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

    /**
     * The App's requests that are no REST API operation: the OAuth web flow of the dashboard's
     * sign-in on github.com (the page a user's browser is sent to, and the exchange of its code for
     * the user's token), which GitHub documents in "Authorizing OAuth apps" and not in the REST
     * description. Their fields are checked against that page instead: those it requires, and none
     * it does not name.
     */
    static final String OAUTH_AUTHORIZE = "/login/oauth/authorize";
    private static final Set<String> AUTHORIZE_FIELDS = Set.of("client_id", "redirect_uri", "login", "scope",
            "state", "allow_signup", "prompt", "code_challenge", "code_challenge_method");
    static final String OAUTH_TOKEN = "/login/oauth/access_token";
    private static final Set<String> OAUTH_REQUIRED = Set.of("client_id", "client_secret", "code");
    private static final Set<String> OAUTH_FIELDS = Set.of("client_id", "client_secret", "code",
            "redirect_uri", "code_verifier");
    /**
     * A file's path in the contents API holds slashes ({@code .github/agentx.toml}), which GitHub takes
     * as they are, while an OpenAPI path parameter stops at one: checked with them encoded.
     */
    private static final Pattern CONTENTS = Pattern.compile(
            "(/repos/[^/]+/[^/]+/contents/)(.+)");

    /** What is wrong with {@code method path} (with its query) carrying {@code body} (JSON, or null); empty when nothing. */
    public String check(String method, String pathAndQuery, String body) {
        int q = pathAndQuery.indexOf('?');
        String path = q < 0 ? pathAndQuery : pathAndQuery.substring(0, q);
        if (path.equals(OAUTH_TOKEN)) {
            return oauth("POST", method, body, OAUTH_REQUIRED, OAUTH_FIELDS);
        }
        if (path.equals(OAUTH_AUTHORIZE)) {
            return oauth("GET", method, q < 0 ? "" : pathAndQuery.substring(q + 1), Set.of("client_id"),
                    AUTHORIZE_FIELDS);
        }
        Matcher contents = CONTENTS.matcher(path);
        if (contents.matches()) {
            path = contents.group(1) + contents.group(2).replace("/", "%2F");
        }
        SimpleRequest.Builder b = new SimpleRequest.Builder(Request.Method.valueOf(method), path);
        if (q >= 0) {
            for (String pair : pathAndQuery.substring(q + 1).split("&")) {
                int eq = pair.indexOf('=');
                String name = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq),
                        StandardCharsets.UTF_8);
                String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1),
                        StandardCharsets.UTF_8);
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

    private static String oauth(String documented, String method, String form, Set<String> required,
                                Set<String> named) {
        if (!method.equals(documented)) {
            return "oauth.method: GitHub documents " + documented + " for it, not " + method;
        }
        Set<String> fields = new TreeSet<>();
        for (String pair : (form == null ? "" : form).split("&")) {
            if (!pair.isEmpty()) {
                fields.add(URLDecoder.decode(pair.split("=", 2)[0], StandardCharsets.UTF_8));
            }
        }
        Set<String> missing = new TreeSet<>(required);
        missing.removeAll(fields);
        Set<String> unknown = new TreeSet<>(fields);
        unknown.removeAll(named);
        return (missing.isEmpty() ? "" : "oauth.body.missing: " + missing)
                + (unknown.isEmpty() ? "" : (missing.isEmpty() ? "" : "; ") + "oauth.body.unknown: " + unknown);
    }
}
