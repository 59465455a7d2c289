package dev.agentx.clarify.mcp;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The clarification tools as an agent host lists them: each one's name, title, description for
 * the model, input schema (JSON Schema, as a map) and whether it only reads. Defined once, for
 * every transport that serves them; what each one does is {@link ClarifyTools}'s.
 */
public final class ToolCatalogue {
    /** The longest wait one call may ask for; a host's own tool-call timeout is often shorter. */
    public static final int MAX_WAIT_SECONDS = 3600;

    /** One tool: its name, title, description for the model, input schema and whether it only reads. */
    public record Tool(String name, String title, String description, Map<String, Object> inputSchema,
                       boolean readOnly) {
        /** The arguments it takes: its schema's properties. */
        @SuppressWarnings("unchecked")
        public Set<String> arguments() {
            return ((Map<String, Object>) inputSchema.get("properties")).keySet();
        }
    }

    private static final List<Tool> TOOLS = catalogue();
    /** The argument every tool of the server's {@code /mcp} takes besides its own. */
    public static final String REPOSITORY = "repository";

    private ToolCatalogue() {
    }

    /** Every tool, in the order a host lists them. */
    public static List<Tool> tools() {
        return TOOLS;
    }

    /**
     * The tools as the server's {@code /mcp} lists them: each takes {@link #REPOSITORY} too
     * ({@code OWNER/NAME}, required, first), the repository whose issue it is about.
     */
    public static List<Tool> withRepository() {
        List<Tool> out = new ArrayList<>();
        for (Tool t : TOOLS) {
            @SuppressWarnings("unchecked")
            Map<String, Object> own = (Map<String, Object>) t.inputSchema().get("properties");
            Map<String, Object> props = new LinkedHashMap<>();
            props.put(REPOSITORY, Collections.unmodifiableMap(prop("string", "The repository, OWNER/NAME, e.g. "
                    + "octo-org/shop: one the AgentX Clarify App is installed on.")));
            props.putAll(own);
            @SuppressWarnings("unchecked")
            List<String> required = new ArrayList<>((List<String>) t.inputSchema().get("required"));
            required.add(0, REPOSITORY);
            Map<String, Object> s = new LinkedHashMap<>(t.inputSchema());
            s.put("properties", Collections.unmodifiableMap(props));
            s.put("required", List.copyOf(required));
            out.add(new Tool(t.name(), t.title(), t.description(), Collections.unmodifiableMap(s), t.readOnly()));
        }
        return List.copyOf(out);
    }

    /** The tool named {@code name}, if there is one. */
    public static Optional<Tool> named(String name) {
        return TOOLS.stream().filter(t -> t.name().equals(name)).findFirst();
    }

    private static List<Tool> catalogue() {
        Map<String, Object> issue = prop("integer", "The issue number the clarification belongs to.");
        issue.put("minimum", 1);
        Map<String, Object> id = prop("string", "The clarification id, CLR-<issue>-<nnn>, e.g. CLR-42-001.");
        id.put("pattern", "^CLR-[0-9]+-[0-9]{3,}$");
        Map<String, Object> wait = prop("integer", "Seconds to wait for the answer before returning (0 to "
                + MAX_WAIT_SECONDS + "; default 0: return at once). Keep it below your host's tool-call timeout.");
        wait.put("minimum", 0);
        wait.put("maximum", MAX_WAIT_SECONDS);
        // clarify_wait's is required: no default to speak of
        Map<String, Object> waitFor = prop("integer", "Seconds to wait for the answer before returning (0 to "
                + MAX_WAIT_SECONDS + "; 0 looks once and returns). Keep it below your host's tool-call timeout.");
        waitFor.put("minimum", 0);
        waitFor.put("maximum", MAX_WAIT_SECONDS);
        Map<String, Object> options = new LinkedHashMap<>();
        options.put("type", "array");
        options.put("items", Map.of("type", "string"));
        options.put("description", "Choices the answer should pick from (optional).");
        Map<String, Object> blocking = prop("boolean", "Whether you stop work on the issue until answered "
                + "(default true). A workflow step may downgrade it to non-blocking; a note then says so.");
        Map<String, Object> choice = prop("integer", "The option the answer picks, 1 for the first (default: the "
                + "option the answer's text names, as '2' or the option's text).");
        choice.put("minimum", 1);
        Map<String, Object> issueShow = prop("integer", "Show every clarification of this issue instead.");
        issueShow.put("minimum", 1);

        List<Tool> list = new ArrayList<>();
        list.add(new Tool("clarify_ask", "Ask an upstream agent",
                "Ask another role (an upstream agent or a person in a role, e.g. architect or product-manager) a "
                        + "question about an issue instead of guessing. The hub checks that your workflow lets you "
                        + "ask that role, records the question in the issue's ledger and routes it to the role. "
                        + "Returns the clarification id (CLR-<issue>-<nnn>). With wait_seconds it waits for the "
                        + "answer and returns it, so you can ask and continue in one call; if the wait ends first, "
                        + "call clarify_wait later. Rounds are limited (5 blocking, 6 non-blocking by default); "
                        + "past the limit the clarification is escalated to a person.",
                schema(List.of("issue", "to", "question"), "issue", issue,
                        "to", prop("string", "The role to ask, e.g. architect, product-manager."),
                        "question", prop("string", "The question, 1 to 2000 characters."),
                        "topic", prop("string", "A short subject, 1 to 200 characters (default: the question's "
                                + "first line)."),
                        "blocking", blocking, "options", options,
                        "workflow", prop("string", "The issue's workflow (default: the project's default_workflow)."),
                        "wait_seconds", wait), false));
        list.add(new Tool("clarify_answer", "Answer a question",
                "Answer the open round of a clarification addressed to you (see clarify_inbox). The requester "
                        + "then resolves it or asks a follow-up round.",
                schema(List.of("id", "answer"), "id", id,
                        "answer", prop("string", "The answer, 1 to 2000 characters."), "choice", choice), false));
        list.add(new Tool("clarify_followup", "Ask the next round",
                "Ask a follow-up question on a clarification you opened, after its answer. Counts as the next "
                        + "round; past the round limit it is refused with MAX_ROUNDS_EXCEEDED and escalated to a "
                        + "person. With wait_seconds it waits for the answer as clarify_ask does.",
                schema(List.of("id", "question"), "id", id,
                        "question", prop("string", "The follow-up question, 1 to 2000 characters."),
                        "wait_seconds", wait), false));
        list.add(new Tool("clarify_resolve", "Resolve a clarification",
                "Close a clarification you opened as resolved, once the answer settles it. Unblocks you on the issue. "
                        + "Only the requester resolves; an escalated one waits for a person.",
                schema(List.of("id"), "id", id,
                        "note", prop("string", "The decision or resolution note (optional).")), false));
        list.add(new Tool("clarify_escalate", "Hand it to a person",
                "Escalate a clarification you opened or were asked to a person when agents cannot settle it "
                        + "(conflicting answers, a product decision). It stays open until a person resolves it.",
                schema(List.of("id"), "id", id, "reason", prop("string", "Why it needs a person.")), false));
        list.add(new Tool("clarify_wait", "Wait for an answer",
                "Wait for the answer to the open round of a clarification, up to wait_seconds, without "
                        + "polling. Returns the answer, or says the clarification was escalated or closed, or that "
                        + "the wait ended first.",
                schema(List.of("id", "wait_seconds"), "id", id, "wait_seconds", waitFor), true));
        list.add(new Tool("clarify_inbox", "What waits on me",
                "What waits on you, oldest first: questions addressed to you to answer (clarify_answer), and "
                        + "answers to your questions to read (then clarify_resolve or clarify_followup).",
                schema(List.of()), true));
        list.add(new Tool("clarify_show", "Show a thread",
                "Show one clarification with its whole thread (questions, answers, options chosen), or with "
                        + "'issue' every clarification of an issue.",
                schema(List.of(), "id", id, "issue", issueShow), true));
        list.add(new Tool("clarify_status", "My status and the ready queue",
                "Your status (working, clarifying, blocked-clarification), what you wait on and who waits on "
                        + "you, and the ready queue: the open issues, with those blocked by a pending blocking "
                        + "clarification marked.",
                schema(List.of()), true));
        return List.copyOf(list);
    }

    private static Map<String, Object> prop(String type, String description) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("type", type);
        p.put("description", description);
        return p;
    }

    /** An object schema of {@code properties} (name, schema, ...), read-only: every transport shares it. */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> schema(List<String> required, Object... properties) {
        Map<String, Object> props = new LinkedHashMap<>();
        for (int i = 0; i < properties.length; i += 2) {
            props.put((String) properties[i], Collections.unmodifiableMap((Map<String, Object>) properties[i + 1]));
        }
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("type", "object");
        s.put("properties", Collections.unmodifiableMap(props));
        s.put("required", required);
        s.put("additionalProperties", false);
        return Collections.unmodifiableMap(s);
    }
}
