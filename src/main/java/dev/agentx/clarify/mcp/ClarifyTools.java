package dev.agentx.clarify.mcp;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.ledger.ActiveLedgers;
import dev.agentx.clarify.ledger.LedgerWatcher;
import dev.agentx.clarify.monitor.AgentOverview;
import dev.agentx.clarify.monitor.MonitorAction;
import dev.agentx.clarify.monitor.MonitorReport;
import dev.agentx.clarify.monitor.ReadyQueue;
import dev.agentx.clarify.protocol.ClarificationId;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import dev.agentx.clarify.render.Ansi;
import dev.agentx.clarify.render.CliRenderer;
import dev.agentx.clarify.routing.ClarificationEngine;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.routing.Outcome;
import dev.agentx.clarify.routing.Validation;
import dev.agentx.clarify.status.AgentStatus;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The clarification tools an agent host calls over MCP: each one checks its arguments, runs the
 * same engine command as the matching {@code agentx clarify} command (so routing, the scope
 * guard, round limits and the ledger are the same), runs the monitor pass the CLI runs after it,
 * and answers with text for the model and the same facts as data. Every tool acts as the
 * workspace's agent. Nothing here knows the MCP SDK: {@link McpStdioServer} adapts it.
 */
public final class ClarifyTools {
    private static final Logger LOG = LoggerFactory.getLogger(ClarifyTools.class);
    /** The longest wait one call may ask for; a host's own tool-call timeout is often shorter. */
    public static final int MAX_WAIT_SECONDS = 3600;
    private static final int MAX_ISSUE = 999_999_999;

    /** One tool: its name, title, description for the model, input schema and whether it only reads. */
    public record Tool(String name, String title, String description, Map<String, Object> inputSchema,
                       boolean readOnly) {
    }

    private final McpWorkspace ws;
    private final LedgerWatcher watcher;
    private final CliRenderer text = new CliRenderer(Ansi.OFF);
    private final List<Tool> tools = catalogue();

    public ClarifyTools(McpWorkspace workspace, LedgerWatcher watcher) {
        this.ws = workspace;
        this.watcher = watcher;
    }

    public List<Tool> tools() {
        return tools;
    }

    public String agent() {
        return ws.agent();
    }

    /** Runs one tool call. Never throws: every failure is a result with {@code error} set. */
    public ToolResult call(String name, Map<String, Object> arguments) {
        return call(name, arguments, () -> false);
    }

    /**
     * As {@link #call(String, Map)}; a wait for an answer ends early once {@code ended} is true (the
     * host cancelled the call or closed the session) and the result says what there is then:
     * {@code waited.outcome} {@code ended}. Whoever sets it calls {@link LedgerWatcher#wake()}.
     */
    public ToolResult call(String name, Map<String, Object> arguments, BooleanSupplier ended) {
        try {
            return switch (name) {
                case "clarify_ask" -> ask(arguments, ended);
                case "clarify_answer" -> answer(arguments);
                case "clarify_followup" -> followUp(arguments, ended);
                case "clarify_resolve" -> resolve(arguments);
                case "clarify_escalate" -> escalate(arguments);
                case "clarify_wait" -> await(arguments, ended);
                case "clarify_inbox" -> inbox(arguments);
                case "clarify_show" -> show(arguments);
                case "clarify_status" -> status(arguments);
                default -> ToolResult.failed(ErrorCode.USAGE, "Unknown tool '" + name + "'; the tools are "
                        + tools.stream().map(Tool::name).toList() + ".");
            };
        } catch (ClarificationEngine.RoundLimitException e) {
            ClarificationRecord r = e.outcome().record();
            String detail = text.entry(r, r.thread().get(r.thread().size() - 1)).stripTrailing();
            return ToolResult.failed(e.code(), e.getMessage(), detail);
        } catch (ClarifyException e) {
            return ToolResult.failed(e.code(), e.getMessage());
        } catch (UncheckedIOException e) {
            LOG.warn("{} failed: {}", name, e.getMessage(), e);
            return ToolResult.failed(ErrorCode.INTERNAL, e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return ToolResult.failed(ErrorCode.INTERNAL, "the server is shutting down; the wait was cut short.");
        } catch (RuntimeException e) {
            LOG.warn("{} failed", name, e);
            return ToolResult.failed(ErrorCode.INTERNAL, e + " (please report this with the tool call you made)");
        }
    }

    // ---- the tools -------------------------------------------------------------------------

    private ToolResult ask(Map<String, Object> arguments, BooleanSupplier ended) throws InterruptedException {
        ToolArgs a = new ToolArgs("clarify_ask", arguments,
                Set.of("issue", "to", "question", "topic", "blocking", "options", "workflow", "wait_seconds"));
        int issue = issue(a);
        String to = a.text("to");
        String question = a.text("question");
        String topic = a.optionalText("topic");
        boolean blocking = a.bool("blocking", true);
        List<String> options = a.texts("options");
        String workflow = a.optionalText("workflow");
        int wait = waitSeconds(a);
        Outcome o = ws.engine().execute(new ClarifyCommand.Ask(issue, ws.agent(), to, topic, question, blocking,
                options, workflow));
        List<String> notes = afterChange(o);
        ClarificationRecord r = afterPass(o, notes);
        String line = r.id() + " asked: " + r.from() + " -> " + r.to() + ", round " + r.round() + " of "
                + r.maxRounds() + (r.blocking() ? ", blocking" : ", non-blocking");
        return waitIfAsked(o.issue(), r, wait, line, notes, ended);
    }

    private ToolResult answer(Map<String, Object> arguments) {
        ToolArgs a = new ToolArgs("clarify_answer", arguments, Set.of("id", "answer", "choice"));
        String id = id(a);
        String answer = a.text("answer");
        Integer choice = Validation.choice("choice", a.optionalInteger("choice", Integer.MIN_VALUE, 1000));
        // an agent's own answer: it counts by the record's autonomy, as one through a channel does
        Outcome o = ws.engine().agentAnswer(new ClarifyCommand.Answer(id, ws.agent(), answer, choice), "mcp");
        List<String> notes = afterChange(o);
        ClarificationRecord r = afterPass(o, notes);
        String line = r.pendingProposal().isPresent() && r.status().awaitingAnswer()
                ? r.id() + " answer proposed (round " + r.round() + " of " + r.maxRounds() + "): it counts once a person "
                + "in role " + r.to() + " accepts it"
                : r.id() + " answered (round " + r.round() + " of " + r.maxRounds() + ")";
        return result(o.issue(), r, line, notes, Map.of());
    }

    private ToolResult followUp(Map<String, Object> arguments, BooleanSupplier ended) throws InterruptedException {
        ToolArgs a = new ToolArgs("clarify_followup", arguments, Set.of("id", "question", "wait_seconds"));
        String id = id(a);
        String question = a.text("question");
        int wait = waitSeconds(a);
        Outcome o = ws.engine().execute(new ClarifyCommand.FollowUp(id, ws.agent(), question));
        List<String> notes = afterChange(o);
        ClarificationRecord r = afterPass(o, notes);
        String line = r.id() + " round " + r.round() + " asked; "
                + (r.status().awaitingAnswer() ? "waiting for " + r.to() : r.status().wire());
        return waitIfAsked(o.issue(), r, wait, line, notes, ended);
    }

    /**
     * Only the requester resolves, and not while the record waits for a person (escalated), as in
     * GitHub Mode; the engine checks both under the issue's lock ({@code asRequester}), since a
     * person may resolve any record from the CLI.
     */
    private ToolResult resolve(Map<String, Object> arguments) {
        ToolArgs a = new ToolArgs("clarify_resolve", arguments, Set.of("id", "note"));
        String id = id(a);
        Outcome o;
        try {
            o = ws.engine().execute(new ClarifyCommand.Resolve(id, ws.agent(), a.optionalText("note"), true));
        } catch (ClarifyException e) {
            if (e.code() == ErrorCode.VALIDATION && find(ClarificationId.parse(id)).to().equals(ws.agent())) {
                throw new ClarifyException(ErrorCode.VALIDATION, e.getMessage().replaceAll("\\.$", "") + "; as its "
                        + "target, answer it with clarify_answer, or hand it to a person with clarify_escalate.");
            }
            throw e;
        }
        List<String> notes = afterChange(o);
        return result(o.issue(), o.record(), o.record().id() + " resolved", notes, Map.of());
    }

    /** The requester or the target escalates, as in GitHub Mode; no other agent. */
    private ToolResult escalate(Map<String, Object> arguments) {
        ToolArgs a = new ToolArgs("clarify_escalate", arguments, Set.of("id", "reason"));
        String id = id(a);
        ClarificationRecord asked = find(ClarificationId.parse(id));
        if (!asked.from().equals(ws.agent()) && !asked.to().equals(ws.agent())) {
            throw new ClarifyException(ErrorCode.VALIDATION, "Only the requester '" + asked.from() + "' or the target '"
                    + asked.to() + "' may escalate " + asked.id() + ", not '" + ws.agent() + "'.");
        }
        Outcome o = ws.engine().execute(new ClarifyCommand.Escalate(id, ws.agent(), a.optionalText("reason")));
        List<String> notes = afterChange(o);
        ClarificationRecord r = o.record();
        String summary = text.entry(r, r.thread().get(r.thread().size() - 1)).stripTrailing();
        return result(o.issue(), r, r.id() + " escalated\n" + summary, notes, Map.of());
    }

    private ToolResult await(Map<String, Object> arguments, BooleanSupplier ended) throws InterruptedException {
        ToolArgs a = new ToolArgs("clarify_wait", arguments, Set.of("id", "wait_seconds"));
        String id = id(a);
        int wait = a.integer("wait_seconds", 0, MAX_WAIT_SECONDS);
        ClarificationId cid = ClarificationId.parse(id);
        ClarificationRecord r = find(cid);
        if (!r.status().awaitingAnswer()) {
            return result(cid.issue(), r, r.id() + " is " + r.status().wire() + "; nothing to wait for",
                    List.of(), Map.of("waited", waited(r.status().wire(), Duration.ZERO)));
        }
        return waitIfAsked(cid.issue(), r, wait, r.id() + " round " + r.round() + " waits for " + r.to(), List.of(),
                ended);
    }

    private ToolResult inbox(Map<String, Object> arguments) {
        new ToolArgs("clarify_inbox", arguments, Set.of());
        ActiveLedgers.Scan scan = ws.activeLedgers().scan();
        List<Waiting> questions = new ArrayList<>();
        List<Waiting> answers = new ArrayList<>();
        for (Ledger l : scan.active()) {
            for (ClarificationRecord r : l.active()) {
                if (r.to().equals(ws.agent()) && r.status().awaitingAnswer()) {
                    questions.add(new Waiting(l.issueNumber(), r, lastOf(r, true)));
                } else if (r.from().equals(ws.agent()) && r.status() == Status.ANSWERED) {
                    answers.add(new Waiting(l.issueNumber(), r, lastOf(r, false)));
                }
            }
        }
        Comparator<Waiting> oldestFirst = Comparator.comparing((Waiting w) -> w.since().timestamp())
                .thenComparing(w -> w.record().id());
        questions.sort(oldestFirst);
        answers.sort(oldestFirst);
        StringBuilder b = new StringBuilder();
        if (questions.isEmpty() && answers.isEmpty()) {
            b.append("Nothing waits on ").append(ws.agent()).append(": no questions to answer, no answers to read.");
        }
        if (!questions.isEmpty()) {
            b.append("Questions for ").append(ws.agent()).append(" to answer (clarify_answer), oldest first:\n");
            for (Waiting w : questions) {
                b.append("- ").append(w.record().id()).append(" from ").append(w.record().from()).append(", round ")
                        .append(w.record().round()).append(" of ").append(w.record().maxRounds())
                        .append(w.record().blocking() ? ", blocking" : ", non-blocking").append(", waiting ")
                        .append(CliRenderer.age(age(w.since().timestamp()))).append(": ")
                        .append(w.since().body().strip()).append('\n');
                optionsLine(b, w.record());
            }
        }
        if (!answers.isEmpty()) {
            b.append(questions.isEmpty() ? "" : "\n").append("Answers for ").append(ws.agent())
                    .append(" to read (then clarify_resolve or clarify_followup), oldest first:\n");
            for (Waiting w : answers) {
                b.append("- ").append(w.record().id()).append(" from ").append(w.record().to()).append(", round ")
                        .append(w.record().round()).append(": ").append(w.since().body().strip()).append('\n');
            }
        }
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("agent", ws.agent());
        data.put("questions", questions.stream().map(this::waitingData).toList());
        data.put("answers", answers.stream().map(this::waitingData).toList());
        warnings(data, scan.problems());
        return ToolResult.ok(withWarnings(b.toString().stripTrailing(), scan.problems()), data);
    }

    private ToolResult show(Map<String, Object> arguments) {
        ToolArgs a = new ToolArgs("clarify_show", arguments, Set.of("id", "issue"));
        if (a.has("id") == a.has("issue")) {
            throw a.usage("give either 'id' (one clarification) or 'issue' (all of an issue's threads).");
        }
        if (a.has("id")) {
            ClarificationId cid = ClarificationId.parse(id(a));
            ClarificationRecord r = find(cid);
            Map<String, Object> data = new LinkedHashMap<>();
            data.put("issueNumber", cid.issue());
            data.put("clarification", recordData(r));
            return ToolResult.ok(text.record(r).stripTrailing(), data);
        }
        int issue = issue(a);
        Ledger ledger = ws.ledgers().read(issue).orElse(Ledger.empty(issue));
        StringBuilder b = new StringBuilder();
        for (ClarificationRecord r : ledger.clarifications()) {
            if (b.length() > 0) {
                b.append('\n');
            }
            b.append(text.record(r));
        }
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("issueNumber", issue);
        data.put("clarifications", ledger.clarifications().stream().map(this::recordData).toList());
        return ToolResult.ok(b.length() == 0 ? "No clarifications on issue #" + issue + "." : b.toString().stripTrailing(),
                data);
    }

    private ToolResult status(Map<String, Object> arguments) {
        new ToolArgs("clarify_status", arguments, Set.of());
        ActiveLedgers.Scan scan = ws.activeLedgers().scan();
        Map<String, AgentStatus> statuses = ws.statuses().read();
        AgentOverview.Agent me = AgentOverview.one(ws.agent(), statuses, scan.active());
        List<ReadyQueue.Item> queue = ReadyQueue.build(ws.ledgers().issues(), ws.listedIssues().get(), scan.active(),
                false);
        StringBuilder b = new StringBuilder();
        AgentStatus s = me.status();
        b.append(ws.agent()).append(": ").append(s == null ? "no status yet" : s.status().wire()
                + (s.issue() == null ? "" : " on #" + s.issue())).append('\n');
        for (AgentOverview.Involvement in : me.waitingFor()) {
            b.append("- waiting on ").append(in.waitsOn()).append(" for ").append(in.record().id())
                    .append(in.record().blocking() ? " (blocking)" : " (non-blocking)").append('\n');
        }
        for (AgentOverview.Involvement in : me.answering()) {
            b.append("- asked by ").append(in.record().from()).append(" in ").append(in.record().id()).append('\n');
        }
        b.append(queue.isEmpty() ? "Ready queue: empty.\n" : "Ready queue:\n");
        for (ReadyQueue.Item it : queue) {
            b.append("- #").append(it.issue().number());
            if (it.issue().title() != null) {
                b.append(' ').append(it.issue().title());
            }
            if (it.blocked()) {
                b.append("  ").append(ReadyQueue.BLOCKED).append(" (")
                        .append(String.join(", ", it.blockedBy().stream().map(ClarificationRecord::id).toList()))
                        .append(')');
            }
            b.append('\n');
        }
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("agent", ws.agent());
        data.put("status", s == null ? null : JsonSupport.shared().convertValue(s, MAP));
        data.put("waitingFor", me.waitingFor().stream().map(in -> brief(in.issue(), in.record(), in.waitsOn())).toList());
        data.put("answering", me.answering().stream().map(in -> brief(in.issue(), in.record(), null)).toList());
        List<Map<String, Object>> ready = new ArrayList<>();
        for (ReadyQueue.Item it : queue) {
            Map<String, Object> n = new LinkedHashMap<>();
            n.put("number", it.issue().number());
            n.put("title", it.issue().title());
            n.put("blocked", it.blocked());
            n.put("blockedBy", it.blockedBy().stream().map(ClarificationRecord::id).toList());
            ready.add(n);
        }
        data.put("ready", ready);
        warnings(data, scan.problems());
        return ToolResult.ok(withWarnings(b.toString().stripTrailing(), scan.problems()), data);
    }

    // ---- waiting ---------------------------------------------------------------------------

    /**
     * The result of a command that asked a round: with {@code wait} seconds, after waiting for that
     * round's answer (or for the record to be escalated or closed) without holding a lock, or until
     * {@code ended}.
     */
    private ToolResult waitIfAsked(int issue, ClarificationRecord asked, int wait, String line, List<String> notes,
                                   BooleanSupplier ended) throws InterruptedException {
        if (wait == 0) {
            return result(issue, asked, line, notes, Map.of());
        }
        long start = System.nanoTime();
        int round = asked.round();
        // settled already when the target's channel answered at once (command, http, auto) or escalated it
        Optional<ClarificationRecord> settled = !asked.status().awaitingAnswer() ? Optional.of(asked)
                : watcher.await(issue, Duration.ofSeconds(wait), () -> ws.ledgers().read(issue)
                        .flatMap(l -> l.find(asked.id())).filter(r -> r.round() != round || !r.status().awaitingAnswer()),
                        ended);
        Duration waited = Duration.ofNanos(System.nanoTime() - start);
        if (settled.isEmpty()) {
            ClarificationRecord now = ws.ledgers().read(issue).flatMap(l -> l.find(asked.id())).orElse(asked);
            boolean cut = ended.getAsBoolean();
            return result(issue, now, line + (cut ? "\nThe wait ended early (the session is ending); "
                    : "\nNo answer within " + wait + " s; ") + now.id() + " still waits for " + now.to()
                    + ". Call clarify_wait with the id to wait again, or clarify_inbox later.",
                    notes, Map.of("waited", waited(cut ? "ended" : "timeout", waited)));
        }
        ClarificationRecord r = settled.get();
        StringBuilder b = new StringBuilder(line).append('\n');
        String outcome;
        if (r.status() == Status.ANSWERED || r.round() != round && r.status().awaitingAnswer()) {
            outcome = "answered";
            ThreadEntry answer = lastAnswer(r, round);
            b.append("Answer from ").append(r.to()).append(":\n");
            if (answer != null) {
                b.append(text.entry(r, answer));
            }
            b.append("Next: clarify_resolve if that settles it, or clarify_followup to ask the next round.");
        } else {
            outcome = r.status().wire();
            b.append(r.id()).append(" is ").append(outcome).append(" now:\n")
                    .append(text.entry(r, r.thread().get(r.thread().size() - 1)).stripTrailing());
        }
        return result(issue, r, b.toString(), notes, Map.of("waited", waited(outcome, waited)));
    }

    private static Map<String, Object> waited(String outcome, Duration waited) {
        Map<String, Object> w = new LinkedHashMap<>();
        w.put("outcome", outcome);
        w.put("seconds", waited.toMillis() / 1000.0);
        return w;
    }

    private static ThreadEntry lastAnswer(ClarificationRecord r, int round) {
        ThreadEntry found = null;
        for (ThreadEntry e : r.thread()) {
            if (e.round() == round && e.isAnswer() && !e.isProposal()) {
                found = e;
            }
        }
        return found;
    }

    /** The issue argument: one under 1 is refused as the engine and the CLI refuse it (VALIDATION), not as a bad argument. */
    private static int issue(ToolArgs a) {
        return Validation.issue(a.integer("issue", Integer.MIN_VALUE, MAX_ISSUE));
    }

    private int waitSeconds(ToolArgs a) {
        Integer w = a.optionalInteger("wait_seconds", 0, MAX_WAIT_SECONDS);
        return w == null ? 0 : w;
    }

    // ---- shared ----------------------------------------------------------------------------

    private static final TypeReference<LinkedHashMap<String, Object>> MAP = new TypeReference<>() {
    };

    private String id(ToolArgs a) {
        String raw = a.text("id");
        return ClarificationId.parse(raw).toString();
    }

    private ClarificationRecord find(ClarificationId cid) {
        return ws.ledgers().read(cid.issue()).flatMap(l -> l.find(cid.toString()))
                .orElseThrow(() -> new ClarifyException(ErrorCode.NOT_FOUND, "Clarification " + cid
                        + " not found in ledger. List the issue's records with clarify_show and issue "
                        + cid.issue() + "."));
    }

    /** The monitor pass the CLI runs after a clarify command; its actions become notes. */
    private List<String> afterChange(Outcome o) {
        List<String> notes = new ArrayList<>(o.notes());
        try {
            MonitorReport report = ws.monitorPass().get();
            for (MonitorAction a : report.actions()) {
                notes.add("monitor: " + a.describe());
            }
            for (String w : report.warnings()) {
                notes.add("monitor: warning: " + w);
            }
        } catch (ClarifyException | UncheckedIOException e) {
            notes.add("monitor: pass skipped: " + e.getMessage());
        }
        return notes;
    }

    /**
     * The record as the call leaves it: when the monitor's pass after the change acted (escalated a
     * stuck or deadlocked one, say), as the ledger holds it now, so the result's status is not one
     * its own notes overtook.
     */
    private ClarificationRecord afterPass(Outcome o, List<String> notes) {
        if (notes.size() == o.notes().size()) {
            return o.record();
        }
        try {
            return ws.ledgers().read(o.issue()).flatMap(l -> l.find(o.record().id())).orElse(o.record());
        } catch (ClarifyException | UncheckedIOException e) {
            return o.record();
        }
    }

    private ToolResult result(int issue, ClarificationRecord r, String line, List<String> notes,
                              Map<String, Object> extra) {
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("id", r.id());
        data.put("issueNumber", issue);
        data.put("status", r.status().wire());
        data.put("round", r.round());
        data.put("maxRounds", r.maxRounds());
        data.put("blocking", r.blocking());
        data.put("notes", notes);
        data.putAll(extra);
        data.put("clarification", recordData(r));
        StringBuilder b = new StringBuilder(line.stripTrailing());
        for (String n : notes) {
            b.append("\nnote: ").append(n);
        }
        return ToolResult.ok(b.toString(), data);
    }

    private Map<String, Object> recordData(ClarificationRecord r) {
        return JsonSupport.shared().convertValue(r, MAP);
    }

    private Map<String, Object> brief(int issue, ClarificationRecord r, String waitsOn) {
        Map<String, Object> n = new LinkedHashMap<>();
        n.put("id", r.id());
        n.put("issueNumber", issue);
        n.put("from", r.from());
        n.put("to", r.to());
        n.put("topic", r.topic());
        n.put("status", r.status().wire());
        n.put("round", r.round());
        n.put("blocking", r.blocking());
        if (waitsOn != null) {
            n.put("waitsOn", waitsOn);
        }
        return n;
    }

    /** A record waiting on the agent, and the entry it has waited since. */
    private record Waiting(int issue, ClarificationRecord record, ThreadEntry since) {
    }

    private Map<String, Object> waitingData(Waiting w) {
        Map<String, Object> n = brief(w.issue(), w.record(), null);
        n.put("maxRounds", w.record().maxRounds());
        n.put("since", w.since().timestamp().toString());
        n.put(w.since().isAnswer() ? "answer" : "question", w.since().body());
        if (!w.record().options().isEmpty()) {
            n.put("options", w.record().options());
        }
        return n;
    }

    /** The record's last question (for the target) or last counted answer (for the requester). */
    private static ThreadEntry lastOf(ClarificationRecord r, boolean question) {
        ThreadEntry found = r.thread().get(r.thread().size() - 1);
        for (ThreadEntry e : r.thread()) {
            if (question ? e.type() == EntryType.QUESTION
                    : e.isAnswer() && !e.isProposal()) {
                found = e;
            }
        }
        return found;
    }

    private static void optionsLine(StringBuilder b, ClarificationRecord r) {
        if (r.options().isEmpty()) {
            return;
        }
        b.append("  options:");
        for (int i = 0; i < r.options().size(); i++) {
            b.append(' ').append(i + 1).append(") ").append(r.options().get(i));
        }
        b.append('\n');
    }

    private Duration age(Instant since) {
        Duration d = Duration.between(since, ws.clock().instant());
        return d.isNegative() ? Duration.ZERO : d;
    }

    private static void warnings(Map<String, Object> data, List<String> problems) {
        data.put("warnings", problems.stream().map(p -> ErrorCode.LEDGER_DAMAGED.name() + ": " + p).toList());
    }

    private static String withWarnings(String text, List<String> problems) {
        StringBuilder b = new StringBuilder(text);
        for (String p : problems) {
            b.append("\nwarning: ").append(ErrorCode.LEDGER_DAMAGED.name()).append(": ").append(p);
        }
        return b.toString();
    }

    // ---- the catalogue ---------------------------------------------------------------------

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

    private static Map<String, Object> schema(List<String> required, Object... properties) {
        Map<String, Object> props = new LinkedHashMap<>();
        for (int i = 0; i < properties.length; i += 2) {
            props.put((String) properties[i], properties[i + 1]);
        }
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("type", "object");
        s.put("properties", props);
        s.put("required", required);
        s.put("additionalProperties", false);
        return s;
    }
}
