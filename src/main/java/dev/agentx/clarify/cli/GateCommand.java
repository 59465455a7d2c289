package dev.agentx.clarify.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.monitor.CliDuration;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.render.Visible;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code agentx gate --issue N}: the merge gate of Local Mode, for a CI job of a project that runs
 * without the App. It fails (exit 1) while a blocking clarification of the issue is open, listing
 * each, and passes (exit 0) when none is. It only reads.
 */
@Command(name = "gate", mixinStandardHelpOptions = true,
        description = {"The merge gate for CI: exit 1 while a blocking clarification of issue N is open (each "
                + "listed: id, from -> to, round, age), 0 when none is. Open means any status but resolved and "
                + "abandoned. Reads .agentx/ and writes nothing.",
                "Any other exit code (2 usage, 1 with an error code on stderr) means the gate could not tell: "
                        + "a CI step fails on it as well."},
        footer = {"", "Examples:", "  agentx gate --issue 42", "  agentx gate --issue 42 --json",
                "  # in CI, with the issue taken from the branch name feature/42-...:",
                "  agentx gate --issue \"$(echo \"$BRANCH\" | sed -E 's#^[^/]*/([0-9]+).*#\\1#')\""})
final class GateCommand implements Callable<Integer> {
    /** The exit code while the gate is closed. */
    static final int BLOCKED = 1;

    private final CliContext ctx;

    @Option(names = "--issue", required = true, paramLabel = "N", description = "The issue the change is for.")
    int issue;

    GateCommand(CliContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public Integer call() {
        if (issue < 1) {
            throw new ClarifyException(ErrorCode.VALIDATION, "--issue must be an issue number from 1, got " + issue);
        }
        ctx.noteIfNoProject();
        List<ClarificationRecord> open = ctx.local().ledgers().read(issue).map(Ledger::active).orElse(List.of())
                .stream().filter(ClarificationRecord::blocking).toList();
        Instant now = ctx.clock.instant();
        if (ctx.json()) {
            ObjectNode root = ctx.mapper().createObjectNode();
            root.put("issue", issue);
            ArrayNode list = root.putArray("open");
            for (ClarificationRecord r : open) {
                ObjectNode n = list.addObject();
                n.put("id", r.id());
                n.put("from", r.from());
                n.put("to", r.to());
                n.put("topic", r.topic());
                n.put("status", r.status().wire());
                n.put("round", r.round());
                n.put("created", r.created().toString());
                n.put("ageSeconds", Math.max(0, Duration.between(r.created(), now).toSeconds()));
                if (r.codeLine() != null) {
                    n.set("codeLine", ctx.mapper().valueToTree(r.codeLine()));
                }
            }
            root.put("blocked", !open.isEmpty());
            ctx.printJson(root);
            return open.isEmpty() ? 0 : BLOCKED;
        }
        StringBuilder b = new StringBuilder();
        if (open.isEmpty()) {
            b.append("issue #").append(issue).append(": no open blocking clarification\n");
        } else {
            b.append("issue #").append(issue).append(": blocked by ").append(open.size())
                    .append(open.size() == 1 ? " open blocking clarification\n" : " open blocking clarifications\n");
            for (ClarificationRecord r : open) {
                b.append("  ").append(r.id()).append(' ').append(Visible.text(r.from())).append(" -> ")
                        .append(Visible.text(r.to())).append(", round ").append(r.round()).append(", ")
                        .append(r.status().wire()).append(", ").append(age(r.created(), now)).append(" old: \"")
                        .append(Visible.text(r.topic())).append('"');
                if (r.codeLine() != null) {
                    b.append(" (").append(Visible.text(r.codeLine().describe())).append(')');
                }
                b.append('\n');
            }
        }
        ctx.out.print(b);
        ctx.out.flush();
        return open.isEmpty() ? 0 : BLOCKED;
    }

    private static String age(Instant created, Instant now) {
        Duration d = Duration.between(created, now);
        return CliDuration.format(d.isNegative() ? Duration.ZERO : d);
    }
}
