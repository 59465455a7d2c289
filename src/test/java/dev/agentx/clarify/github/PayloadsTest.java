package dev.agentx.clarify.github;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPInputStream;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * {@link Payloads#head}, the acknowledgement's one pass over a body, against the tree the worker
 * builds of the same body: the same action, repository, issue number, order key and installation,
 * and the same bodies refused as not JSON or no object.
 */
class PayloadsTest {
    private static final Path FIXTURES = Path.of(System.getProperty("agentx.fixtures", "src/test/resources/fixtures"));
    /** The tree as the acknowledgement read it before: a whole JSON value and nothing after it. */
    private static final ObjectMapper TREE = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    @Test
    void everyDocumentedPayloadReadsTheSameAsItsTree() throws Exception {
        List<byte[]> bodies = new ArrayList<>();
        try (var files = Files.list(FIXTURES.resolve("github-webhooks"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".json")).toList()) {
                bodies.add(Files.readAllBytes(f));
            }
        }
        try (var files = Files.list(FIXTURES.resolve("octokit-webhooks-examples"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".json.gz")).toList()) {
                try (InputStream in = new GZIPInputStream(Files.newInputStream(f))) {
                    for (JsonNode event : TREE.readTree(in)) {
                        for (JsonNode example : event.get("examples")) {
                            bodies.add(TREE.writeValueAsBytes(example));
                        }
                    }
                }
            }
        }
        assertTrue(bodies.size() >= 700, "the fixtures and the whole corpus: " + bodies.size());
        int withIssue = 0;
        for (byte[] body : bodies) {
            Payloads.Head head = agrees(body);
            withIssue += head.issue() > 0 ? 1 : 0;
        }
        assertTrue(withIssue >= 50, "payloads about an issue among them: " + withIssue);
    }

    @Test
    void aPullRequestsEventsLineUpWithItsConversation() throws Exception {
        byte[] pr = "{\"pull_request\":{\"number\":7},\"repository\":{\"id\":42,\"full_name\":\"O/R\"}}".getBytes(
                StandardCharsets.UTF_8);
        assertEquals("42#7", agrees(pr).orderKey());
        assertEquals(7, Payloads.head(pr).issue(), "a pull request's number is its issue's");
        byte[] comment = "{\"issue\":{\"number\":7},\"repository\":{\"id\":42,\"full_name\":\"o/r\"}}".getBytes(
                StandardCharsets.UTF_8);
        assertEquals("42#7", agrees(comment).orderKey());
    }

    @Test
    void oddShapesReadAsTheTreeReadsThem() throws Exception {
        String[] bodies = {
            "{}",
            "{\"issue\":{\"number\":7},\"repository\":{\"id\":1296269,\"full_name\":\"o/r\"},\"action\":\"created\"}",
            // a name given twice counts as its last, also when the last lacks what the first had
            "{\"issue\":{\"number\":7},\"issue\":{\"title\":\"x\"},\"repository\":{\"id\":1296269}}",
            "{\"issue\":{\"number\":7,\"number\":8},\"repository\":{\"id\":1,\"id\":1296269}}",
            "{\"action\":\"a\",\"action\":\"b\",\"installation\":{\"id\":1},\"installation\":{\"id\":2}}",
            // wrong types: read as the tree gives them, checked by the caller
            "{\"issue\":7,\"repository\":\"o/r\",\"action\":5,\"installation\":\"seven\"}",
            "{\"issue\":{\"number\":\"7\"},\"repository\":{\"id\":\"42\"}}",
            "{\"issue\":{\"number\":7},\"repository\":{\"id\":-42}}",
            "{\"issue\":{\"number\":7},\"repository\":{\"id\":18446744073709551658}}",
            "{\"issue\":{\"number\":null},\"repository\":{\"id\":null},\"action\":null,\"installation\":null}",
            "{\"issue\":{\"number\":4294967303},\"repository\":{\"id\":1296269}}",
            "{\"issue\":{\"number\":7.5}}",
            "{\"issue\":{\"number\":-7}}",
            "{\"issue\":[{\"number\":7}],\"repository\":[]}",
            // what is skipped may be any JSON, nested
            "{\"a\":[1,{\"issue\":{\"number\":9}},[[]]],\"issue\":{\"pull\":{\"number\":3},\"number\":2},\"z\":{}}",
        };
        for (String body : bodies) {
            agrees(body.getBytes(StandardCharsets.UTF_8));
        }
        Payloads.Head head = Payloads.head(bodies[2].getBytes(StandardCharsets.UTF_8));
        assertEquals(0, head.issue(), "the last issue has no number");
        assertEquals("", head.orderKey());
        // the repository by its id, whatever name the payload gives it: a rename keeps the line
        assertEquals("1296269#7", Payloads.head(bodies[1].getBytes(StandardCharsets.UTF_8)).orderKey());
        assertEquals("1296269#8", Payloads.head(bodies[3].getBytes(StandardCharsets.UTF_8)).orderKey());
        assertEquals("", Payloads.head(bodies[7].getBytes(StandardCharsets.UTF_8)).orderKey(), "a negative id");
    }

    /** GitHub's comment before and after its repository is renamed and transferred: one line, by the repository's id. */
    @Test
    void aRenamedRepositorysDeliveriesStayInOneLine() throws Exception {
        byte[] before = Files.readAllBytes(FIXTURES.resolve("github-webhooks/issue_comment.created.payload.json"));
        com.fasterxml.jackson.databind.node.ObjectNode after = (com.fasterxml.jackson.databind.node.ObjectNode)
                TREE.readTree(before);
        ((com.fasterxml.jackson.databind.node.ObjectNode) after.get("repository")).put("name", "Renamed")
                .put("full_name", "Elsewhere/Renamed");
        String key = Payloads.head(before).orderKey();
        assertEquals(TREE.readTree(before).at("/repository/id").asLong() + "#"
                + TREE.readTree(before).at("/issue/number").asInt(), key);
        assertEquals(key, Payloads.head(TREE.writeValueAsBytes(after)).orderKey());
        assertEquals(key, Payloads.orderKey(after));
    }

    @Test
    void whatIsNoJsonObjectIsRefusedAsBefore() throws Exception {
        for (String junk : new String[] {"", " ", "null", "[]", "[{}]", "\"text\"", "42", "true"}) {
            assertNull(Payloads.head(junk.getBytes(StandardCharsets.UTF_8)), junk);
        }
        for (String junk : new String[] {"{", "}", "{not json", "{\"a\":1,}", "{\"a\":1} {\"b\":2}", "{}garbage",
                "{\"a\":\"\\u12\"}", "\u0000{}", "[1,]", "[] []", "{\"issue\":{\"number\":7}", "{\"a\":[}"}) {
            assertThrows(JsonProcessingException.class, () -> Payloads.head(junk.getBytes(StandardCharsets.UTF_8)),
                    junk);
        }
        byte[] deep = ("{\"a\":".repeat(5_000) + "1" + "}".repeat(5_000)).getBytes(StandardCharsets.US_ASCII);
        assertThrows(JsonProcessingException.class, () -> Payloads.head(deep), "deeper than the parser's limit");
    }

    /** Any cut of a real payload: refused exactly when the tree refuses it, and read the same when not. */
    @Property(tries = 300)
    void aCutPayloadIsRefusedOrReadAsTheTreeDoes(@ForAll("cuts") byte[] body) throws Exception {
        agreesOrBothRefuse(body);
    }

    @Provide
    Arbitrary<byte[]> cuts() throws IOException {
        byte[] whole = Files.readAllBytes(FIXTURES.resolve("github-webhooks/issue_comment.created.payload.json"));
        return Arbitraries.integers().between(0, whole.length).map(n -> java.util.Arrays.copyOf(whole, n));
    }

    private static void agreesOrBothRefuse(byte[] body) throws IOException {
        JsonNode tree;
        try {
            tree = TREE.readTree(body);
        } catch (JsonProcessingException e) {
            assertThrows(JsonProcessingException.class, () -> Payloads.head(body));
            return;
        }
        if (tree == null || !tree.isObject()) {
            assertNull(Payloads.head(body));
            return;
        }
        agrees(body);
    }

    private static Payloads.Head agrees(byte[] body) throws IOException {
        JsonNode tree = TREE.readTree(body);
        String text = new String(body, StandardCharsets.UTF_8);
        Payloads.Head head = Payloads.head(body);
        assertEquals(tree.path("action"), head.action(), text);
        assertEquals(tree.path("action").asText(""), head.action().asText(""), text);
        assertEquals(Payloads.issueNumber(tree), head.issue(), text);
        // a pull request's events (a review comment) name their issue as the pull request's number
        assertEquals(tree.path("issue").path("number").isMissingNode() ? tree.path("pull_request").path("number")
                : tree.path("issue").path("number"), head.issueNumber(), text);
        assertEquals(tree.path("repository").path("id"), head.repositoryId(), text);
        assertEquals(Payloads.orderKey(tree), head.orderKey(), text);
        assertEquals(tree.get("installation"), head.installation(), text);
        return head;
    }
}
