package dev.agentx.clarify.support;

import dev.agentx.clarify.channel.AnswerChannel;
import dev.agentx.clarify.channel.Delivery;
import dev.agentx.clarify.channel.QuestionRequest;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/** An answer channel that records every question put to it and answers as the test says (default: later). */
public final class RecordingChannel implements AnswerChannel {
    public final List<QuestionRequest> asked = new CopyOnWriteArrayList<>();
    private volatile Function<QuestionRequest, Delivery> reply = r -> new Delivery.Deferred("later");

    public void reply(Function<QuestionRequest, Delivery> how) {
        reply = how;
    }

    @Override
    public Delivery ask(QuestionRequest request) {
        asked.add(request);
        return reply.apply(request);
    }
}
