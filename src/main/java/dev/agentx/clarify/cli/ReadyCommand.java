package dev.agentx.clarify.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.ledger.ActiveLedgers;
import dev.agentx.clarify.monitor.ReadyQueue;
import dev.agentx.clarify.render.Visible;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.render.CliRenderer;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code agentx ready}: the ready queue, with BLOCKED markers on issues waiting for a clarification. */
@Command(name = "ready", mixinStandardHelpOptions = true,
        description = {"The ready queue: open issues (those with clarification ledgers, plus those listed as "
                + ".agentx/issues/N.json), ready ones first. An issue with an open blocking clarification is marked "
                + ReadyQueue.BLOCKED + ". Finished issues (state closed, or status Done; or known only by a ledger whose "
                + "clarifications are all closed) are left out unless --all.",
                "Followed by a monitor pass."},
        footer = {"", "Examples:", "  agentx ready", "  agentx ready --all", "  agentx ready --json"})
final class ReadyCommand implements Runnable {
    private final CliContext ctx;

    @picocli.CommandLine.Mixin
    ServerStateOptions database;

    @Option(names = "--all", description = "Also list finished issues (state closed, status Done, or all clarifications closed).")
    boolean all;

    ReadyCommand(CliContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void run() {
        ctx.noteIfNoProject();
        LocalMode local = ctx.local();
        LocalIssues.Listing listed = new LocalIssues().read(local.issuesDirectory());
        ActiveLedgers.Scan scan = ctx.scan();
        List<ReadyQueue.Item> queue = ReadyQueue.build(local.ledgers().issues(), listed.issues(), scan.active(), all);
        List<String> warnings = new ArrayList<>(listed.warnings());
        warnings.addAll(scan.problems());
        if (ctx.json()) {
            ObjectNode root = ctx.mapper().createObjectNode();
            ArrayNode issues = root.putArray("issues");
            for (ReadyQueue.Item it : queue) {
                ObjectNode n = issues.addObject();
                n.put("number", it.issue().number());
                n.put("title", it.issue().title());
                n.put("state", it.issue().state() == null ? "open" : it.issue().state());
                n.put("status", it.issue().status());
                ArrayNode labels = n.putArray("labels");
                it.issue().labels().forEach(labels::add);
                n.put("blocked", it.blocked());
                if (it.blocked()) {
                    n.put("marker", ReadyQueue.BLOCKED);
                }
                ArrayNode by = n.putArray("clarifications");
                it.blockedBy().forEach(r -> by.add(MonitorOutput.brief(ctx, it.issue().number(), r)));
            }
            MonitorOutput.warnings(root, warnings);
            ctx.printJson(root);
            return;
        }
        StringBuilder b = new StringBuilder();
        if (queue.isEmpty()) {
            int finished = all ? 0 : ReadyQueue.build(local.ledgers().issues(), listed.issues(), scan.active(), true)
                    .size();
            if (finished > 0) {
                b.append("No open issues (").append(finished).append(" finished: agentx ready --all lists ")
                        .append(finished == 1 ? "it" : "them").append(").\n");
            } else {
                b.append(ctx.onDatabase() ? "No issues in this repository's ledgers in the database.\n"
                        : "No issues: none listed in .agentx/issues/ and no clarification ledgers.\n");
            }
        }
        int width = ctx.width();
        for (ReadyQueue.Item it : queue) {
            ReadyQueue.Issue i = it.issue();
            String title = i.title() == null ? "(no title)" : Visible.text(i.title());
            String status = i.status() != null ? Visible.text(i.status()) : i.closed() ? "closed" : "-";
            String prefix = String.format("#%-6d %-12s ", i.number(), status);
            String waits = it.blocked() ? " (" + it.blockedBy().stream().map(ReadyCommand::waiting)
                    .collect(Collectors.joining("; ")) + ")" : "";
            String marker = it.blocked() ? "  " + ReadyQueue.BLOCKED : "";
            if (width > 0) {
                // the title gives way first, then what the issue waits on (left out where even a cut of
                // it does not fit); the marker is always whole
                int left = width - prefix.length() - marker.length();
                title = CliRenderer.fit(title, Math.max(CliRenderer.MIN_CELL, left - waits.length()));
                if (!waits.isEmpty()) {
                    int room = left - title.length() - 1;
                    waits = room < CliRenderer.MIN_CELL ? "" : " " + CliRenderer.fit(waits.substring(1), room);
                }
            }
            b.append(prefix).append(title);
            if (it.blocked()) {
                b.append("  ").append(ctx.ansi().color("31;1", ReadyQueue.BLOCKED)).append(waits);
            }
            b.append('\n');
        }
        ctx.out.print(b);
        ctx.out.flush();
        warnings.forEach(w -> ctx.err.println("warning: " + w));
        ctx.err.flush();
    }

    private static String waiting(ClarificationRecord r) {
        return r.id() + " " + r.from() + " -> " + r.to() + ", " + r.status().wire();
    }
}
