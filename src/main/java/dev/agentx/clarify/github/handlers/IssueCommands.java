package dev.agentx.clarify.github.handlers;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.github.outbox.Outbox;
import dev.agentx.clarify.mcp.ToolCommands;
import dev.agentx.clarify.monitor.MonitorReport;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.routing.ClarificationEngine;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.routing.Outcome;
import dev.agentx.clarify.store.UnitOfWork;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A remote MCP call's engine command on one repository, carried out as a {@code /clarify}
 * comment's is: the command and what the issue then lacks on GitHub (the round's comment naming
 * the asker's role, the labels) queued in the outbox in one unit of the store (on PostgreSQL one
 * transaction), so it is posted exactly once; once committed, a new question goes to its
 * target's channel, the senders are told, and the repository's monitor pass follows at its pace.
 */
public final class IssueCommands implements ToolCommands {
    private final LocalMode repo;
    private final RepoRef ref;
    private final long installation;
    private final IssueMirror mirror;
    private final Outbox outbox;
    private final UnitOfWork unit;
    /** After a command committed: its issue, to send what it queued and run the monitor at its pace. */
    private final Consumer<IssueContext> afterCommit;

    public IssueCommands(LocalMode repo, RepoRef ref, long installation, IssueMirror mirror, Outbox outbox,
                         UnitOfWork unit, Consumer<IssueContext> afterCommit) {
        this.repo = repo;
        this.ref = ref;
        this.installation = installation;
        this.mirror = mirror;
        this.outbox = outbox;
        this.unit = unit;
        this.afterCommit = afterCommit;
    }

    @Override
    public Outcome execute(ClarifyCommand command) {
        return inUnit(() -> repo.engine().execute(command, null, false));
    }

    @Override
    public Outcome agentAnswer(ClarifyCommand.Answer answer, String via) {
        return inUnit(() -> repo.engine().agentAnswer(answer, via));
    }

    /** The server's pass runs after the command, at the repository's pace, as after a comment. */
    @Override
    public MonitorReport monitorPass() {
        return ToolCommands.NO_PASS;
    }

    /**
     * Runs {@code command} and queues what the issue then lacks in one unit; a command refused at
     * the round limit (which escalates the record) commits its escalation before it is refused.
     */
    private Outcome inUnit(Supplier<Outcome> command) {
        ClarificationEngine.RoundLimitException[] refused = {null};
        Outcome o = unit.run(() -> {
            Outcome out;
            try {
                out = command.get();
            } catch (ClarificationEngine.RoundLimitException e) {
                refused[0] = e;
                out = e.outcome();
            }
            mirror.sync(repo, ref, out.issue(), installation);
            return out;
        });
        outbox.sync();
        Outcome routed = refused[0] == null ? route(o) : o;
        afterCommit.accept(new IssueContext(installation, ref, repo, o.issue(), "", List.of()));
        if (refused[0] != null) {
            throw refused[0];
        }
        return routed;
    }

    /**
     * A new question goes to its target's channel once committed (a person's role waits; an
     * agent's channel may answer at once, which is then posted too).
     */
    private Outcome route(Outcome o) {
        if (o.events().isEmpty() || o.record() == null) {
            return o;
        }
        Optional<ClarificationRecord> now = repo.ledgers().read(o.issue()).flatMap(l -> l.find(o.record().id()));
        if (now.isEmpty() || now.get().status() != Status.PENDING || now.get().round() != o.record().round()) {
            return o;
        }
        Outcome routed = repo.engine().route(o);
        if (routed != o) {
            mirror.sync(repo, ref, o.issue(), installation);
            outbox.sync();
        }
        return routed;
    }
}
