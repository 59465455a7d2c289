package dev.agentx.clarify.channel;

import dev.agentx.clarify.protocol.OptionsParser;

/**
 * {@code channel = "auto"}: answers at once with the default option (the one marked
 * {@code (default)}, else the first), for tests and non-interactive runs. A question without
 * options cannot be answered this way: that is a failure, and the record stays pending.
 */
public final class AutoChannel implements AnswerChannel {
    @Override
    public Delivery ask(QuestionRequest request) {
        if (request.options().isEmpty()) {
            return new Delivery.Failed(request.to() + "'s auto channel cannot answer " + request.id()
                    + ": the question offers no options to choose from");
        }
        int i = OptionsParser.defaultIndex(request.options());
        return new Delivery.Answered(OptionsParser.label(request.options().get(i)), i, "auto");
    }
}
