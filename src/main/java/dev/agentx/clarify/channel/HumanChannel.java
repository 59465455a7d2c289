package dev.agentx.clarify.channel;

/** The default channel: a person answers later, by {@code agentx clarify answer} or by comment. */
public final class HumanChannel implements AnswerChannel {
    @Override
    public Delivery ask(QuestionRequest request) {
        return new Delivery.Deferred("waiting for " + request.to() + " to answer " + request.id());
    }
}
