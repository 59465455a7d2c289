package dev.agentx.clarify.channel;

/** What a channel did with a question. */
public sealed interface Delivery {
    /** The target answered; {@code choice} is the 0-based option index, if it picked one. */
    record Answered(String text, Integer choice, String channel) implements Delivery {
    }

    /** The answer comes later (a person, or an agent that will call back). */
    record Deferred(String note) implements Delivery {
    }

    /** The channel failed or timed out; the record stays pending for the monitor. */
    record Failed(String error) implements Delivery {
    }
}
