package dev.agentx.clarify.monitor;

/** One thing a monitor pass did. Each is taken by exactly one monitor, however many run. */
public sealed interface MonitorAction {
    int issue();

    String id();

    /** {@code stale}, {@code answered}, {@code escalated} or {@code failed}, as in the JSON output. */
    String kind();

    /** One line for people. */
    String describe();

    /**
     * A pending record past its SLA became stale; {@code reask} says what asking the target again
     * did, or why it was not asked again.
     */
    record MarkedStale(int issue, String id, String why, String reask) implements MonitorAction {
        @Override
        public String kind() {
            return "stale";
        }

        @Override
        public String describe() {
            return id + " stale: " + why + "; " + reask;
        }
    }

    /** Asked again, the target's channel answered at once and the answer was recorded. */
    record Answered(int issue, String id, String by, String channel) implements MonitorAction {
        @Override
        public String kind() {
            return "answered";
        }

        @Override
        public String describe() {
            return id + " answered by " + by + " through its " + channel + " channel";
        }
    }

    /** Escalated to a human for {@code cause}. */
    record Escalated(int issue, String id, Cause cause, String why) implements MonitorAction {
        @Override
        public String kind() {
            return "escalated";
        }

        @Override
        public String describe() {
            return id + " escalated (" + cause.wire() + "): " + why;
        }
    }

    /** An action that could not be taken this time (e.g. LOCK_TIMEOUT); the next pass tries again. */
    record Failed(int issue, String id, String attempted, String error) implements MonitorAction {
        @Override
        public String kind() {
            return "failed";
        }

        @Override
        public String describe() {
            return id + " " + attempted + " failed: " + error + " (the next monitor pass tries again)";
        }
    }
}
