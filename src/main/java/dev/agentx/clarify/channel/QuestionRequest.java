package dev.agentx.clarify.channel;

import dev.agentx.clarify.protocol.ThreadEntry;
import java.util.List;

/** Everything a target needs to answer one round. */
public record QuestionRequest(String id, int issue, String from, String to, String topic, int round,
                              String question, List<String> options, List<ThreadEntry> thread) {
    public QuestionRequest {
        options = List.copyOf(options);
        thread = List.copyOf(thread);
    }
}
