package dev.agentx.clarify.mcp;

import dev.agentx.clarify.monitor.MonitorAction;
import dev.agentx.clarify.monitor.MonitorReport;
import dev.agentx.clarify.protocol.ClarificationId;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.render.Ansi;
import dev.agentx.clarify.render.CliRenderer;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.routing.Outcome;
import dev.agentx.clarify.routing.Validation;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The tools that change a thread (clarify_ask, clarify_answer, clarify_followup, clarify_resolve,
 * clarify_escalate): each runs the engine command the matching {@code agentx clarify} command
 * runs, as {@code agent}, then the monitor pass the CLI runs after it, whose actions become the
 * result's notes. An ask or a follow-up with {@code wait_seconds} then waits for its answer.
 */
final class CommandTools {
    private final McpWorkspace ws;
    private final String agent;
    private final AnswerWait waits;
    private final CliRenderer text = new CliRenderer(Ansi.OFF);

    /** The tools on {@code workspace}, acting as {@code agent}: the caller, as the ledgers name its role. */
    CommandTools(McpWorkspace workspace, String agent, AnswerWait waits) {
        this.ws = workspace;
        this.agent = agent;
        this.waits = waits;
    }

    CompletableFuture<ToolResult> ask(ToolArgs a, CompletableFuture<?> ended) {
        int issue = a.issue();
        String to = a.text("to");
        String question = a.text("question");
        String topic = a.optionalText("topic");
        boolean blocking = a.bool("blocking", true);
        List<String> options = a.texts("options");
        String workflow = a.optionalText("workflow");
        int wait = a.waitSeconds();
        Outcome o = ws.commands().execute(new ClarifyCommand.Ask(issue, agent, to, topic, question, blocking,
                options, workflow));
        List<String> notes = afterChange(o);
        ClarificationRecord r = afterPass(o, notes);
        String line = r.id() + " asked: " + r.from() + " -> " + r.to() + ", round " + r.round() + " of "
                + r.maxRounds() + (r.blocking() ? ", blocking" : ", non-blocking");
        return waits.result(o.issue(), r, wait, line, notes, ended);
    }

    ToolResult answer(ToolArgs a) {
        String id = a.id();
        String answer = a.text("answer");
        Integer choice = Validation.choice("choice", a.optionalInteger("choice", Integer.MIN_VALUE, 1000));
        // an agent's own answer: it counts by the record's autonomy, as one through a channel does
        Outcome o = ws.commands().agentAnswer(new ClarifyCommand.Answer(id, agent, answer, choice), "mcp");
        List<String> notes = afterChange(o);
        ClarificationRecord r = afterPass(o, notes);
        String line = r.pendingProposal().isPresent() && r.status().awaitingAnswer()
                ? r.id() + " answer proposed (round " + r.round() + " of " + r.maxRounds() + "): it counts once a person "
                + "in role " + r.to() + " accepts it"
                : r.id() + " answered (round " + r.round() + " of " + r.maxRounds() + ")";
        return RecordResults.of(o.issue(), r, line, notes, Map.of());
    }

    CompletableFuture<ToolResult> followUp(ToolArgs a, CompletableFuture<?> ended) {
        String id = a.id();
        String question = a.text("question");
        int wait = a.waitSeconds();
        Outcome o = ws.commands().execute(new ClarifyCommand.FollowUp(id, agent, question));
        List<String> notes = afterChange(o);
        ClarificationRecord r = afterPass(o, notes);
        String line = r.id() + " round " + r.round() + " asked; "
                + (r.status().awaitingAnswer() ? "waiting for " + r.to() : r.status().wire());
        return waits.result(o.issue(), r, wait, line, notes, ended);
    }

    /**
     * Only the requester resolves, and not while the record waits for a person (escalated), as in
     * GitHub Mode; the engine checks both under the issue's lock ({@code asRequester}), since a
     * person may resolve any record from the CLI.
     */
    ToolResult resolve(ToolArgs a) {
        String id = a.id();
        Outcome o;
        try {
            o = ws.commands().execute(new ClarifyCommand.Resolve(id, agent, a.optionalText("note"), true));
        } catch (ClarifyException e) {
            if (e.code() == ErrorCode.VALIDATION && ws.find(ClarificationId.parse(id)).to().equals(agent)) {
                throw new ClarifyException(ErrorCode.VALIDATION, e.getMessage().replaceAll("\\.$", "") + "; as its "
                        + "target, answer it with clarify_answer, or hand it to a person with clarify_escalate.");
            }
            throw e;
        }
        List<String> notes = afterChange(o);
        return RecordResults.of(o.issue(), o.record(), o.record().id() + " resolved", notes, Map.of());
    }

    /** The requester or the target escalates, as in GitHub Mode; no other agent. */
    ToolResult escalate(ToolArgs a) {
        String id = a.id();
        ClarificationRecord asked = ws.find(ClarificationId.parse(id));
        if (!asked.from().equals(agent) && !asked.to().equals(agent)) {
            throw new ClarifyException(ErrorCode.VALIDATION, "Only the requester '" + asked.from() + "' or the target '"
                    + asked.to() + "' may escalate " + asked.id() + ", not '" + agent + "'.");
        }
        Outcome o = ws.commands().execute(new ClarifyCommand.Escalate(id, agent, a.optionalText("reason")));
        List<String> notes = afterChange(o);
        ClarificationRecord r = o.record();
        String summary = text.entry(r, r.thread().get(r.thread().size() - 1)).stripTrailing();
        return RecordResults.of(o.issue(), r, r.id() + " escalated\n" + summary, notes, Map.of());
    }

    /** The monitor pass the CLI runs after a clarify command; its actions become notes. */
    private List<String> afterChange(Outcome o) {
        List<String> notes = new ArrayList<>(o.notes());
        try {
            MonitorReport report = ws.commands().monitorPass();
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
}
