package dev.agentx.clarify.mcp;

import dev.agentx.clarify.ledger.ActiveLedgers;
import dev.agentx.clarify.monitor.AgentOverview;
import dev.agentx.clarify.monitor.ReadyQueue;
import dev.agentx.clarify.protocol.ClarificationId;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import dev.agentx.clarify.render.Ansi;
import dev.agentx.clarify.render.CliRenderer;
import dev.agentx.clarify.status.AgentStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The tools that only read (clarify_wait, clarify_inbox, clarify_show, clarify_status), as
 * {@code agent}: what waits on it, a thread, its status and the ready queue, and a wait for an
 * answer it was promised.
 */
final class ReadTools {
    private final McpWorkspace ws;
    private final String agent;
    private final AnswerWait waits;
    private final CliRenderer text = new CliRenderer(Ansi.OFF);

    /** The tools on {@code workspace}, as {@code agent}: the caller, as the ledgers name its role. */
    ReadTools(McpWorkspace workspace, String agent, AnswerWait waits) {
        this.ws = workspace;
        this.agent = agent;
        this.waits = waits;
    }

    CompletableFuture<ToolResult> await(ToolArgs a, CompletableFuture<?> ended) {
        String id = a.id();
        int wait = a.integer("wait_seconds", 0, ToolCatalogue.MAX_WAIT_SECONDS);
        ClarificationId cid = ClarificationId.parse(id);
        ClarificationRecord r = ws.find(cid);
        if (!r.status().awaitingAnswer()) {
            return CompletableFuture.completedFuture(RecordResults.of(cid.issue(), r, r.id() + " is "
                    + r.status().wire() + "; nothing to wait for", List.of(),
                    Map.of("waited", AnswerWait.waited(r.status().wire(), Duration.ZERO))));
        }
        return waits.result(cid.issue(), r, wait, r.id() + " round " + r.round() + " waits for " + r.to(), List.of(),
                ended);
    }

    /** A record waiting on the agent, and the entry it has waited since. */
    private record Waiting(int issue, ClarificationRecord record, ThreadEntry since) {
    }

    ToolResult inbox() {
        ActiveLedgers.Scan scan = ws.activeLedgers().scan();
        List<Waiting> questions = new ArrayList<>();
        List<Waiting> answers = new ArrayList<>();
        for (Ledger l : scan.active()) {
            for (ClarificationRecord r : l.active()) {
                if (r.to().equals(agent) && r.status().awaitingAnswer()) {
                    questions.add(new Waiting(l.issueNumber(), r, lastOf(r, true)));
                } else if (r.from().equals(agent) && r.status() == Status.ANSWERED) {
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
            b.append("Nothing waits on ").append(agent).append(": no questions to answer, no answers to read.");
        }
        if (!questions.isEmpty()) {
            b.append("Questions for ").append(agent).append(" to answer (clarify_answer), oldest first:\n");
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
            b.append(questions.isEmpty() ? "" : "\n").append("Answers for ").append(agent)
                    .append(" to read (then clarify_resolve or clarify_followup), oldest first:\n");
            for (Waiting w : answers) {
                b.append("- ").append(w.record().id()).append(" from ").append(w.record().to()).append(", round ")
                        .append(w.record().round()).append(": ").append(w.since().body().strip()).append('\n');
            }
        }
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("agent", agent);
        data.put("questions", questions.stream().map(ReadTools::waitingData).toList());
        data.put("answers", answers.stream().map(ReadTools::waitingData).toList());
        RecordResults.warnings(data, scan.problems());
        return ToolResult.ok(RecordResults.withWarnings(b.toString().stripTrailing(), scan.problems()), data);
    }

    ToolResult show(ToolArgs a) {
        if (a.has("id") == a.has("issue")) {
            throw a.usage("give either 'id' (one clarification) or 'issue' (all of an issue's threads).");
        }
        if (a.has("id")) {
            ClarificationId cid = ClarificationId.parse(a.id());
            ClarificationRecord r = ws.find(cid);
            Map<String, Object> data = new LinkedHashMap<>();
            data.put("issueNumber", cid.issue());
            data.put("clarification", RecordResults.data(r));
            return ToolResult.ok(text.record(r).stripTrailing(), data);
        }
        int issue = a.issue();
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
        data.put("clarifications", ledger.clarifications().stream().map(RecordResults::data).toList());
        return ToolResult.ok(b.length() == 0 ? "No clarifications on issue #" + issue + "." : b.toString().stripTrailing(),
                data);
    }

    ToolResult status() {
        ActiveLedgers.Scan scan = ws.activeLedgers().scan();
        Map<String, AgentStatus> statuses = ws.statuses().read();
        AgentOverview.Agent me = AgentOverview.one(agent, statuses, scan.active());
        List<ReadyQueue.Item> queue = ReadyQueue.build(ws.ledgers().issues(), ws.listedIssues().get(), scan.active(),
                false);
        StringBuilder b = new StringBuilder();
        AgentStatus s = me.status();
        b.append(agent).append(": ").append(s == null ? "no status yet" : s.status().wire()
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
        data.put("agent", agent);
        data.put("status", s == null ? null : RecordResults.data(s));
        data.put("waitingFor", me.waitingFor().stream()
                .map(in -> RecordResults.brief(in.issue(), in.record(), in.waitsOn())).toList());
        data.put("answering", me.answering().stream().map(in -> RecordResults.brief(in.issue(), in.record(), null))
                .toList());
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
        RecordResults.warnings(data, scan.problems());
        return ToolResult.ok(RecordResults.withWarnings(b.toString().stripTrailing(), scan.problems()), data);
    }

    private static Map<String, Object> waitingData(Waiting w) {
        Map<String, Object> n = RecordResults.brief(w.issue(), w.record(), null);
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
}
