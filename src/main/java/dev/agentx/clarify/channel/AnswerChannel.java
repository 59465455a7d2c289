package dev.agentx.clarify.channel;

/**
 * How the hub puts a question to the target role ("runSubagent" in the seeds). A channel either
 * answers now or defers (a person answers later). It is never called under a ledger lock.
 */
@FunctionalInterface
public interface AnswerChannel {
    Delivery ask(QuestionRequest request);
}
