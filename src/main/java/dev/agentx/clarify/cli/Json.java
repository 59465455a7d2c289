package dev.agentx.clarify.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.protocol.ClarificationRecord;

/** JSON shapes of the CLI output. */
final class Json {
    private Json() {
    }

    /** A ledger record with the issue number it belongs to, first. */
    static ObjectNode record(CliContext ctx, int issue, ClarificationRecord r) {
        ObjectNode node = ctx.mapper().createObjectNode();
        node.put("issueNumber", issue);
        node.setAll((ObjectNode) ctx.mapper().valueToTree(r));
        return node;
    }
}
