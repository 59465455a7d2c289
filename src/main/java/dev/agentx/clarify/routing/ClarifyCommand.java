package dev.agentx.clarify.routing;

import java.util.List;

/** The operations of the protocol. {@code by} is who acts; null means the natural actor. */
public sealed interface ClarifyCommand {
    /** Who is acting, for the lock file's diagnostics. */
    String actor();

    record Ask(int issue, String from, String to, String topic, String question, boolean blocking,
               List<String> options, String workflow) implements ClarifyCommand {
        public Ask {
            options = options == null ? List.of() : List.copyOf(options);
        }

        @Override
        public String actor() {
            return from;
        }
    }

    record Answer(String id, String by, String text) implements ClarifyCommand {
        @Override
        public String actor() {
            return by == null ? "answer" : by;
        }
    }

    record FollowUp(String id, String by, String question) implements ClarifyCommand {
        @Override
        public String actor() {
            return by == null ? "followup" : by;
        }
    }

    record Resolve(String id, String by, String note) implements ClarifyCommand {
        @Override
        public String actor() {
            return by == null ? "resolve" : by;
        }
    }

    record Escalate(String id, String by, String reason) implements ClarifyCommand {
        @Override
        public String actor() {
            return by == null ? "escalate" : by;
        }
    }

    record Abandon(String id, String by, String reason) implements ClarifyCommand {
        @Override
        public String actor() {
            return by == null ? "abandon" : by;
        }
    }
}
