package dev.agentx.clarify.github.handlers;

import dev.agentx.clarify.github.commands.CommandParser;
import dev.agentx.clarify.github.commands.CommentCommand;
import dev.agentx.clarify.protocol.ClarificationId;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.OptionsParser;
import dev.agentx.clarify.protocol.Roles;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.render.CommentLimit;
import dev.agentx.clarify.render.MarkdownRenderer;
import dev.agentx.clarify.routing.ClarificationEngine;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.routing.Outcome;
import dev.agentx.clarify.workflow.Step;
import dev.agentx.clarify.workflow.Workflow;
import java.util.List;
import java.util.Optional;

/**
 * Carries out one comment command for a GitHub user: works out the acting role from
 * {@code [roles]}, checks who may do what, runs it through the engine and says what to reply.
 * Refusals (unmapped user, not permitted, bad syntax, wrong issue, and the engine's own:
 * scope, validation, state, not found, round limit) come back as a reply that says why and what
 * to do instead. A lock timeout or an I/O failure is thrown: the delivery is tried again later.
 */
public final class CommandRunner {
    private final Actors actors;
    private final MarkdownRenderer renderer = new MarkdownRenderer();

    /**
     * What happened: accepted or not, the reply to post (null: none; the round itself is posted
     * from the ledger), and a new question still to be put to the target's channel once the
     * delivery's changes are committed ({@link ClarificationEngine#route}; null: none).
     */
    public record Result(boolean accepted, String reply, Outcome unrouted) {
        public Result(boolean accepted, String reply) {
            this(accepted, reply, null);
        }
    }

    /** The actors under the repository's config. */
    private Actors actors(IssueContext ctx) {
        return actors.with(ctx.local().config());
    }

    public CommandRunner(Actors actors) {
        this.actors = actors;
    }

    private static final class Refused extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final String reason;
        final String hint;

        Refused(String reason, String message, String hint) {
            super(message);
            this.reason = reason;
            this.hint = hint;
        }
    }

    /**
     * Carries out one command as the request {@code request} (the delivery and the command's place
     * in it; null: no key). A request the issue's ledger already holds (an earlier attempt wrote it,
     * then the process died before recording its progress) is not carried out again: its result is
     * given as it was, from the record that request changed.
     */
    public Result run(IssueContext ctx, String login, CommentCommand command, String request) {
        try {
            if (!changesLedger(command)) {
                return execute(ctx, login, null, command, request);
            }
            // who the user is, before anything takes the issue's lock: a look-up may call GitHub
            Who who = new Who(actors(ctx).roles(ctx.installation(), login), maintainerMayAct(List.of(command))
                    && actors(ctx).isMaintainer(ctx.installation(), ctx.repo(), login));
            Optional<Result> again = request == null ? Optional.empty() : replay(ctx, command, request);
            if (again.isPresent()) {
                return again.get();
            }
            return execute(ctx, login, who, command, request);
        } catch (Refused r) {
            return refused(login, command, r.reason, r.getMessage(), r.hint);
        } catch (ClarificationEngine.RoundLimitException e) {
            return refused(login, command, e.code().name(), e.getMessage().replace("'agentx clarify resolve "
                    + e.outcome().record().id() + " -m \"<decision>\"'", "/clarify resolve " + e.outcome().record().id()
                    + " <decision>"), e.outcome().record().id() + " is escalated; its escalation summary is "
                    + "posted as a comment of its own, and " + actors(ctx).maintainerPolicy() + " may resolve it.");
        } catch (ClarifyException e) {
            if (e.code() == ErrorCode.LOCK_TIMEOUT || e.code() == ErrorCode.UNAVAILABLE
                    || e.code() == ErrorCode.INTERNAL) {
                throw e;
            }
            return refused(login, command, e.code().name(), e.getMessage(), null);
        }
    }

    /** The user's roles, and whether a maintainer (looked up only for commands a maintainer may give). */
    private record Who(List<String> roles, boolean maintainer) {
    }

    /** Whether carrying out the command may change the ledger (so an earlier run may have). */
    private static boolean changesLedger(CommentCommand command) {
        return !(command instanceof CommentCommand.Invalid || command instanceof CommentCommand.Help
                || command instanceof CommentCommand.Status);
    }

    private Optional<Result> replay(IssueContext ctx, CommentCommand command, String request) {
        Optional<Ledger.Applied> done = ctx.local().ledgers().readBeforeChange(ctx.issue())
                .flatMap(l -> l.applied(request));
        if (done.isEmpty()) {
            return Optional.empty();
        }
        Outcome o = Outcome.replayed(ctx.issue(), done.get().record());
        if (command instanceof CommentCommand.FollowUp && done.get().entry().type() == EntryType.ESCALATION) {
            throw ClarificationEngine.roundLimit(o); // that run was refused at the round limit: so is this one
        }
        return Optional.of(accepted(o));
    }

    /** Carries the command out; {@code who} is null for those that change nothing (help, status, invalid). */
    private Result execute(IssueContext ctx, String login, Who who, CommentCommand command, String request) {
        ClarificationEngine engine = ctx.local().engine();
        if (command instanceof CommentCommand.Invalid inv) {
            throw new Refused("BAD_SYNTAX", "This is not a valid command: " + inv.problem() + ".", grammar());
        }
        if (command instanceof CommentCommand.Help) {
            return new Result(true, help(ctx, login));
        }
        if (command instanceof CommentCommand.Status) {
            return new Result(true, status(ctx));
        }
        List<String> roles = who.roles();
        if (command instanceof CommentCommand.Ask a) {
            String from = requesterRole(ctx, login, roles, a.role());
            // A Markdown list or task list at the end of the question offers its choices.
            OptionsParser.Extracted q = OptionsParser.extract(a.question());
            Outcome o = engine.execute(new ClarifyCommand.Ask(ctx.issue(), from, a.role(), a.topic(), q.question(),
                    a.blocking(), q.options(), ctx.workflow(), null, ctx.codeLine()), request, false);
            return unrouted(o);
        }
        if (command instanceof CommentCommand.Answer a) {
            ClarificationRecord r = a.id() == null ? waitingOn(ctx, login, roles) : record(ctx, a.id());
            if (!roles.contains(r.to())) {
                throw new Refused("NOT_PERMITTED", r.id() + " is addressed to '" + r.to() + "'; @" + login
                        + (roles.isEmpty() ? " has no role" : " acts as " + String.join(", ", roles)) + ".",
                        "Only a member of '" + r.to() + "' in agentx.toml [roles] can answer it.");
            }
            return accepted(engine.execute(new ClarifyCommand.Answer(r.id(), r.to(), a.text()), request));
        }
        if (command instanceof CommentCommand.FollowUp f) {
            ClarificationRecord r = record(ctx, f.id());
            if (!roles.contains(r.from())) {
                // the target answers its record; anyone else may ask the target a question of their own
                throw new Refused("NOT_PERMITTED", "Only the requester '" + r.from() + "' may follow up on " + r.id()
                        + "; @" + login + (roles.isEmpty() ? " has no role" : " acts as " + String.join(", ", roles))
                        + ".", "Ask a member of '" + r.from() + "' to follow up, or " + (roles.contains(r.to())
                        ? "answer it with /clarify answer " + r.id() + " <answer>."
                        : "open your own with /clarify @" + r.to() + " <question>."));
            }
            return unrouted(engine.execute(new ClarifyCommand.FollowUp(r.id(), r.from(), f.question()), request,
                    false));
        }
        if (command instanceof CommentCommand.Resolve c) {
            ClarificationRecord r = record(ctx, c.id());
            boolean requester = roles.contains(r.from()) && r.status() != Status.ESCALATED;
            if (requester) {
                // checked again under the lock: escalated since, it waits for a maintainer
                return accepted(engine.execute(new ClarifyCommand.Resolve(r.id(), r.from(), c.note(), true), request));
            }
            requireMaintainer(who, "/clarify resolve " + r.id() + " <decision>", r.status() == Status.ESCALATED
                    ? r.id() + " is escalated: only " + actors(ctx).maintainerPolicy() + " may resolve it."
                    : "Only the requester '" + r.from() + "' or " + actors(ctx).maintainerPolicy() + " may resolve " + r.id()
                    + ".");
            return accepted(engine.execute(new ClarifyCommand.Resolve(r.id(), login, c.note()), request));
        }
        if (command instanceof CommentCommand.Escalate c) {
            ClarificationRecord r = record(ctx, c.id());
            if (!roles.contains(r.from()) && !roles.contains(r.to())) {
                requireMaintainer(who, "/clarify escalate " + r.id() + " <reason>", "Only the requester '" + r.from()
                        + "', the target '" + r.to() + "' or " + actors(ctx).maintainerPolicy() + " may escalate "
                        + r.id() + ".");
            }
            return accepted(engine.execute(new ClarifyCommand.Escalate(r.id(), login, c.reason()), request));
        }
        if (command instanceof CommentCommand.Abandon c) {
            ClarificationRecord r = record(ctx, c.id());
            if (!roles.contains(r.from())) {
                requireMaintainer(who, "/clarify abandon " + r.id() + " <reason>", "Only the requester '" + r.from()
                        + "' or " + actors(ctx).maintainerPolicy() + " may abandon " + r.id() + ".");
            }
            return accepted(engine.execute(new ClarifyCommand.Abandon(r.id(), login, c.reason()), request));
        }
        if (command instanceof CommentCommand.Accept c) {
            ClarificationRecord r = record(ctx, c.id());
            if (!roles.contains(r.from()) && !roles.contains(r.to())) {
                requireMaintainer(who, "/clarify accept " + r.id(), "Only a person acting as the requester '" + r.from()
                        + "' or the target '" + r.to() + "', or " + actors(ctx).maintainerPolicy() + ", may accept the "
                        + "proposed answer of " + r.id() + ".");
            }
            return accepted(engine.execute(new ClarifyCommand.Accept(r.id(), login), request));
        }
        throw new IllegalStateException("unhandled command " + command);
    }

    /** Refuses unless the user is a maintainer; the hint names {@code command}, the one that was refused. */
    private static void requireMaintainer(Who who, String command, String why) {
        if (!who.maintainer()) {
            throw new Refused("NOT_PERMITTED", why, "Ask one of them to comment " + command + ".");
        }
    }

    /**
     * Looks up now what carrying out {@code commands} for {@code login} will ask GitHub (the
     * teams of {@code [roles]}, and for commands a maintainer may give, the user's permission),
     * so that {@link #run} finds it cached and makes no network call while the delivery's changes
     * hold the issue's ledger. A failed look-up is left for {@link #run} to meet.
     */
    public void lookUp(IssueContext ctx, String login, List<CommentCommand> commands) {
        try {
            actors(ctx).roles(ctx.installation(), login);
            if (maintainerMayAct(commands)) {
                actors(ctx).isMaintainer(ctx.installation(), ctx.repo(), login);
            }
        } catch (RuntimeException e) {
            // the command meets it again and says so (or the delivery is retried)
        }
    }

    /** Whether any of the commands is one a maintainer may give for someone else's clarification. */
    private static boolean maintainerMayAct(List<CommentCommand> commands) {
        return commands.stream().anyMatch(c -> c instanceof CommentCommand.Resolve
                || c instanceof CommentCommand.Escalate || c instanceof CommentCommand.Abandon
                || c instanceof CommentCommand.Accept);
    }

    /** A reply carrying notes the hub made on a record (a channel that failed, a downgrade). */
    public static String notesReply(ClarificationRecord record, List<String> notes) {
        StringBuilder b = new StringBuilder("**").append(record.id()).append("**: ");
        for (String n : notes) {
            b.append(MarkdownRenderer.neutralise(n)).append(' ');
        }
        return b.toString().strip();
    }

    /** Accepted, with the new question (if the command wrote one) still to be routed. */
    private static Result unrouted(Outcome o) {
        Result r = accepted(o);
        return o.events().isEmpty() ? r : new Result(true, r.reply(), o);
    }

    private static Result accepted(Outcome o) {
        return new Result(true, o.notes().isEmpty() ? null : notesReply(o.record(), o.notes()));
    }

    /** The requester's role for an ask: the first of the user's roles allowed to ask the target. */
    private String requesterRole(IssueContext ctx, String login, List<String> roles, String target) {
        if (roles.isEmpty()) {
            throw unmapped(login);
        }
        String to = Roles.canonical(target);
        Workflow wf = ctx.local().workflows().workflow(ctx.workflow() == null
                ? ctx.local().config().defaultWorkflow() : ctx.workflow());
        for (String role : roles) {
            Optional<Step> step = wf.stepOf(role);
            if (step.isPresent() && step.get().canClarify().contains(to)) {
                return role;
            }
        }
        return roles.get(0);
    }

    private static Refused unmapped(String login) {
        return new Refused("UNMAPPED_USER", "@" + login + " has no role in this app's agentx.toml, so the hub "
                + "does not know on whose behalf to act.", "Ask the app's operator to add you under [roles] in "
                + "$AGENTX_DATA_DIR/agentx.toml, e.g. engineer = [\"" + login + "\"], or to add a team of yours.");
    }

    private static ClarificationRecord record(IssueContext ctx, String idText) {
        ClarificationId id = ClarificationId.parse(idText);
        if (id.issue() != ctx.issue()) {
            throw new Refused("WRONG_ISSUE", id + " belongs to issue #" + id.issue() + ", not #" + ctx.issue() + ".",
                    "Comment on issue #" + id.issue() + " instead.");
        }
        return ctx.local().ledgers().readBeforeChange(ctx.issue()).flatMap(l -> l.find(id.toString()))
                .orElseThrow(() -> new ClarifyException(ErrorCode.NOT_FOUND, "Clarification " + id
                        + " does not exist on this issue. `/clarify status` lists its clarifications."));
    }

    private static ClarificationRecord waitingOn(IssueContext ctx, String login, List<String> roles) {
        if (roles.isEmpty()) {
            throw unmapped(login);
        }
        List<ClarificationRecord> waiting = ctx.local().ledgers().readBeforeChange(ctx.issue())
                .map(Ledger::clarifications).orElse(List.of()).stream()
                .filter(r -> r.status().awaitingAnswer() && roles.contains(r.to())).toList();
        if (waiting.isEmpty()) {
            throw new ClarifyException(ErrorCode.NOT_FOUND, "No clarification on this issue is waiting for an answer "
                    + "from " + String.join(", ", roles) + ". `/clarify status` lists them.");
        }
        if (waiting.size() > 1) {
            throw new Refused("AMBIGUOUS", "Several clarifications wait for your answer: "
                    + String.join(", ", waiting.stream().map(ClarificationRecord::id).toList()) + ".",
                    "Name one: /clarify answer " + waiting.get(0).id() + " <answer>.");
        }
        return waiting.get(0);
    }

    private Result refused(String login, CommentCommand command, String reason, String message, String hint) {
        StringBuilder b = new StringBuilder();
        // bots are never mentioned: a bot's login is named, as code
        b.append(login.toLowerCase(java.util.Locale.ROOT).endsWith("[bot]") ? "`" + login + "`" : "@" + login)
                .append(" this command was not carried out:\n\n")
                .append(MarkdownRenderer.quote(CommentLimit.cut(command.source(), CommentLimit.QUOTED_COMMAND)))
                .append("\n\n**").append(reason).append("**: ")
                .append(MarkdownRenderer.neutralise(CommentLimit.cut(message, CommentLimit.QUOTED_COMMAND))).append('\n');
        if (hint != null) {
            b.append('\n').append(hint.startsWith("```") ? hint : MarkdownRenderer.neutralise(hint)).append('\n');
        }
        b.append("\n`/clarify help` lists the commands.");
        return new Result(false, b.toString());
    }

    private static String grammar() {
        return "```\n" + CommandParser.GRAMMAR + "\n```";
    }

    private String help(IssueContext ctx, String login) {
        List<String> roles = actors(ctx).roles(ctx.installation(), login);
        return "**AgentX Clarify** commands (each at the start of a line; the question may go on over lines):\n\n"
                + grammar() + "\n\n@" + login + " acts as: "
                + (roles.isEmpty() ? "no role (ask the app's operator to map you in agentx.toml [roles])"
                : String.join(", ", roles)) + ". Workflow of this issue: "
                + (ctx.workflow() == null ? ctx.local().config().defaultWorkflow() + " (default)" : ctx.workflow())
                + ".";
    }

    private String status(IssueContext ctx) {
        List<ClarificationRecord> records = ctx.local().ledgers().read(ctx.issue()).map(Ledger::clarifications)
                .orElse(List.of());
        if (records.isEmpty()) {
            return "No clarifications on this issue yet. Ask one with `/clarify @<role> <question>`.";
        }
        StringBuilder b = new StringBuilder("Clarifications on this issue:\n\n");
        for (ClarificationRecord r : records) {
            b.append(renderer.thread(r)).append('\n');
        }
        return b.toString().strip();
    }
}
