package dev.agentx.clarify.routing;

import dev.agentx.clarify.protocol.CodeLine;
import java.util.List;

/** The operations of the protocol. {@code by} is who acts; null means the natural actor. */
public sealed interface ClarifyCommand {
    /** Who is acting, for the lock file's diagnostics. */
    String actor();

    /**
     * @param openQuestionId set by {@code agentx clarify ingest}: the id of the agent's open question
     *                       this asks; a second Ask with the same requester and id on the issue is skipped
     * @param codeLine the line of code the question was asked on (a pull request's review comment); null: none
     */
    record Ask(int issue, String from, String to, String topic, String question, boolean blocking,
               List<String> options, String workflow, String openQuestionId, CodeLine codeLine)
            implements ClarifyCommand {
        public Ask {
            options = options == null ? List.of() : List.copyOf(options);
        }

        public Ask(int issue, String from, String to, String topic, String question, boolean blocking,
                   List<String> options, String workflow, String openQuestionId) {
            this(issue, from, to, topic, question, blocking, options, workflow, openQuestionId, null);
        }

        public Ask(int issue, String from, String to, String topic, String question, boolean blocking,
                   List<String> options, String workflow) {
            this(issue, from, to, topic, question, blocking, options, workflow, null);
        }

        @Override
        public String actor() {
            return from;
        }
    }

    /**
     * @param choice the 0-based index of the option the answer picks; null: the engine derives it
     *               from the text (a number or an option's text, see OptionsParser.choose)
     */
    record Answer(String id, String by, String text, Integer choice) implements ClarifyCommand {
        public Answer(String id, String by, String text) {
            this(id, by, text, null);
        }

        @Override
        public String actor() {
            return by == null ? "answer" : by;
        }
    }

    /**
     * A person confirms the agent's proposed answer of the current round (autonomy approve), so
     * that it counts: {@code agentx clarify accept CLR-N-NNN}, {@code /clarify accept CLR-N-NNN}.
     * {@code by} is who accepts (null: "human"; GitHub Mode passes the login).
     */
    record Accept(String id, String by) implements ClarifyCommand {
        @Override
        public String actor() {
            return by == null ? "accept" : by;
        }
    }

    record FollowUp(String id, String by, String question) implements ClarifyCommand {
        @Override
        public String actor() {
            return by == null ? "followup" : by;
        }
    }

    /**
     * @param asRequester an agent resolving its own question (MCP, GitHub Mode's requester): under
     *                    the issue's lock, {@code by} must be the requester and the record must not be
     *                    escalated, which leaves it to a person; false: a person, who may close any
     */
    record Resolve(String id, String by, String note, boolean asRequester) implements ClarifyCommand {
        public Resolve(String id, String by, String note) {
            this(id, by, note, false);
        }

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
