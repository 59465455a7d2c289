package dev.agentx.clarify.channel;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.files.JsonSupport;
import java.nio.charset.StandardCharsets;
import java.util.TreeMap;

/**
 * The request an automatic agent receives (stdin of a command, body of an http POST), one JSON
 * object: {@code version, id, issue, from, to, topic, round, question, options, thread,
 * repository, issueContext}. {@code thread} holds the ledger's entries so far (the ledger's form, with
 * {@code choice} where an answer chose an option).
 */
public final class RequestJson {
    public static final int VERSION = 1;

    private final RequestContext context;

    public RequestJson(RequestContext context) {
        this.context = context;
    }

    public ObjectNode tree(QuestionRequest r) {
        ObjectNode root = JsonSupport.shared().createObjectNode();
        root.put("version", VERSION);
        root.put("id", r.id());
        root.put("issue", r.issue());
        root.put("from", r.from());
        root.put("to", r.to());
        root.put("topic", r.topic());
        root.put("round", r.round());
        root.put("question", r.question());
        ArrayNode options = root.putArray("options");
        r.options().forEach(options::add);
        root.set("thread", JsonSupport.shared().valueToTree(r.thread()));
        root.set("repository", JsonSupport.shared().valueToTree(new TreeMap<>(context.repository())));
        root.set("issueContext", JsonSupport.shared().valueToTree(new TreeMap<>(context.issue(r.issue()))));
        return root;
    }

    /** The request as UTF-8 JSON on one line, ending with a newline. */
    public byte[] encode(QuestionRequest r) {
        try {
            return (JsonSupport.shared().writeValueAsString(tree(r)) + "\n").getBytes(StandardCharsets.UTF_8);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot encode the request for " + r.id(), e);
        }
    }
}
