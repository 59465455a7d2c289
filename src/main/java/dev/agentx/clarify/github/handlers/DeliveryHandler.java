package dev.agentx.clarify.github.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.config.AgentxConfig;
import dev.agentx.clarify.config.Labels;
import dev.agentx.clarify.github.MonitorPacing;
import dev.agentx.clarify.github.Payloads;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.github.RepositoryMonitor;
import dev.agentx.clarify.github.RepositoryNames;
import dev.agentx.clarify.github.commands.CommandParser;
import dev.agentx.clarify.github.commands.CommentCommand;
import dev.agentx.clarify.github.gate.PullRequestGate;
import dev.agentx.clarify.github.inbox.DeliveryProcessor;
import dev.agentx.clarify.github.outbox.Effect;
import dev.agentx.clarify.github.outbox.Outbox;
import dev.agentx.clarify.github.repoconfig.RepoConfigMerge;
import dev.agentx.clarify.github.repoconfig.RepoConfigs;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.render.MarkdownRenderer;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.routing.Outcome;
import dev.agentx.clarify.routing.Validation;
import dev.agentx.clarify.store.DeliveryQueue.Progress;
import dev.agentx.clarify.store.InboundDelivery;
import dev.agentx.clarify.store.UnitOfWork;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Processes one delivery from the inbox: {@code issue_comment} created (commands),
 * {@code pull_request_review_comment} created (commands; a question keeps the line of code, and
 * the replies go to the review thread: {@link ReviewComments}), {@code issues}
 * opened (commands in the body), labeled (the {@code clarify:<role>} trigger, or the prefix the
 * repository's {@code [labels]} names), closed (abandon the issue's active clarifications),
 * {@code ping} (logged); {@code repository}, {@code installation} and {@code
 * installation_repositories}: a repository's life ({@link RepositoryEvents}); {@code pull_request}
 * {@code check_run} and {@code check_suite}: the merge gate ({@link PullRequestEvents}); everything else is
 * acknowledged and ignored.
 *
 * <p>Top to bottom: {@link #prepare} parses the delivery and looks up what needs the network;
 * the changes it returns carry out the commands, bring the issue in step with its ledger and
 * queue the effects (inside the store's unit: on PostgreSQL one transaction); once committed,
 * new questions go to their targets' channels and the monitor runs for the repository. Effects
 * go to the outbox; nothing here calls GitHub to post.
 */
public final class DeliveryHandler implements DeliveryProcessor {
    private static final Logger LOG = LoggerFactory.getLogger(DeliveryHandler.class);
    static final String OUR_MARKERS = "<!-- agentx";
    /**
     * At most this many {@code /clarify} commands are carried out per comment (or issue body); a
     * comment with more runs none of them and gets one reply saying so.
     */
    public static final int MAX_COMMANDS = 20;

    private final long appId;
    /** The repositories by GitHub's id: the name each was last seen with, where the server may post. */
    private final RepositoryNames names;
    private final RepositoryEvents life;
    private final RepoConfigs repoConfigs;
    private final Function<RepoRef, LocalMode> repos;
    private final Actors actors;
    private final CommandRunner runner;
    private final IssueMirror mirror;
    private final Outbox outbox;
    /** The store's unit: a monitor pass and what it queues commit together ({@link #runMonitor}). */
    private final UnitOfWork unit;
    private final RepositoryMonitor monitor;
    /** When the pass after an event runs: at once, or with the repository's next paced pass. */
    private final MonitorPacing pacing;
    private final ServerMetrics metrics;
    /** The merge gate's events ({@code pull_request}, {@code check_run}, {@code check_suite}); null: no gate. */
    private volatile PullRequestEvents pulls;

    public DeliveryHandler(long appId, RepoConfigs repoConfigs, RepositoryNames names,
                           Function<RepoRef, LocalMode> repos, Actors actors,
                           IssueMirror mirror, Outbox outbox, RepositoryMonitor monitor, MonitorPacing pacing,
                           ServerMetrics metrics, UnitOfWork unit) {
        this.names = names;
        this.life = new RepositoryEvents(names);
        this.pacing = pacing;
        this.unit = unit;
        this.metrics = metrics;
        this.appId = appId;
        this.repoConfigs = repoConfigs;
        this.repos = repos;
        this.actors = actors;
        this.runner = new CommandRunner(actors);
        this.mirror = mirror;
        this.outbox = outbox;
        this.monitor = monitor;
    }

    /**
     * Has {@code gate} keep its record of pull requests from their events, and evaluate them and
     * answer re-requested runs; the issue mirror tells it of each clarification's change.
     */
    public void gate(PullRequestGate gate) {
        this.pulls = new PullRequestEvents(appId, names, repos, gate);
    }

    /** A delivery that changes nothing and leaves nothing to do. */
    private static final Changes NONE = (progress, save) -> NOTHING_AFTER;

    /** A question a command wrote, to be put to its target's channel once committed, and its reply's key. */
    private record Unrouted(Outcome asked, String key) {
    }

    /**
     * Reads the delivery and looks up what needs the network (the repository's
     * {@code .github/agentx.toml}, who the sender is), then hands back its changes: the commands
     * carried out and the issue brought in step with its ledger, their effects queued; and, once
     * they are committed, the new questions put to their targets' channels and the monitor run.
     */
    @Override
    public Changes prepare(InboundDelivery d, JsonNode p) {
        if (p == null) {
            LOG.error("delivery {} ({}): the body is not a JSON object; ignored", d.id(), d.event());
            return NONE;
        }
        String action = p.path("action").asText("");
        switch (d.event()) {
            case "ping" -> LOG.info("ping from hook {} of app {}: {}", p.path("hook_id").asText("?"),
                    p.path("hook").path("app_id").asText("?"), p.path("zen").asText(""));
            case "repository", "installation", "installation_repositories" -> life.record(d, p, action);
            case "issue_comment", "issues", "pull_request_review_comment" -> {
                return onIssueEvent(d, p, action);
            }
            case "pull_request" -> {
                return pulls == null ? NONE : pulls.pullRequest(d, p, action);
            }
            case "check_run" -> {
                return pulls == null ? NONE : pulls.checkRun(d, p, action);
            }
            case "check_suite" -> {
                return pulls == null ? NONE : pulls.checkSuite(d, p, action);
            }
            default -> LOG.debug("delivery {}: event '{}' is not one GitHub Mode acts on; acknowledged", d.id(), d.event());
        }
        return NONE;
    }

    private Changes onIssueEvent(InboundDelivery d, JsonNode p, String action) {
        JsonNode installation = p.get("installation");
        if (installation == null || Payloads.id(installation.get("id")) == 0) {
            LOG.warn("delivery {} ({}.{}) has no installation object, so the app cannot act on it; ignored. "
                    + "Deliveries must come from the GitHub App's own webhook, not a repository webhook.",
                    d.id(), d.event(), action);
            return NONE;
        }
        RepoRef named;
        int issueNumber = Payloads.issueNumber(p);
        long repositoryId = Payloads.id(p.path("repository").get("id"));
        try {
            named = new RepoRef(p.path("repository").path("owner").path("login").asText(null),
                    p.path("repository").path("name").asText(null), repositoryId);
        } catch (IllegalArgumentException e) {
            LOG.warn("delivery {} ({}.{}): {}; ignored", d.id(), d.event(), action, e.getMessage());
            return NONE;
        }
        if (repositoryId <= 0) {
            LOG.warn("delivery {} ({}.{}): repository {} has no id, and a repository's state is kept by its id; "
                    + "ignored", d.id(), d.event(), action, named);
            return NONE;
        }
        if (issueNumber == Payloads.INVALID) {
            LOG.warn("delivery {} ({}.{}): issue.number {} is not an issue number; ignored", d.id(), d.event(), action,
                    p.path("issue").path("number"));
            return NONE;
        }
        long installationId = Payloads.id(installation.get("id"));
        // the name a repository is kept under follows the newest delivery: a rename or transfer carries on
        RepoRef ref = names.seen(named, installationId, d.receivedAt());
        if (issueNumber < 1) {
            LOG.warn("delivery {} ({}.{}) names no issue; ignored", d.id(), d.event(), action);
            return NONE;
        }
        // a broken .github/agentx.toml is reported once per blob sha (the outbox key), on this issue
        // looked up only for events that may act, so that the rest cost no API call
        RepoConfigs.Resolved config = mayAct(d.event() + "." + action, p) ? repoConfigs.resolve(installationId, ref)
                : new RepoConfigs.Resolved(repoConfigs.current(ref), null, java.util.Optional.empty());
        Optional<Effect> broken = config.problem().map(problem -> new Effect.Comment(ref.stateKey() + "/"
                + RepoConfigMerge.PATH + "/" + config.sha(), installationId, ref, issueNumber, brokenConfig(problem)));
        // a review comment's event is about a pull request, whose issue it is: its title and labels are the issue's
        JsonNode issue = p.has("issue") ? p.path("issue") : p.path("pull_request");
        List<String> labels = new ArrayList<>();
        issue.path("labels").forEach(l -> labels.add(l.path("name").asText("")));
        IssueContext ctx = new IssueContext(installationId, ref, repos.apply(ref), issueNumber,
                issue.path("title").asText(""), labels, d.event().equals("pull_request_review_comment")
                ? ReviewComments.codeLine(p.path("comment")) : null);

        String key = "delivery/" + d.id();
        Step step = switch (d.event() + "." + action) {
            case "issue_comment.created" -> {
                JsonNode comment = p.path("comment");
                long commentId = Payloads.id(comment.get("id"));
                // a comment is created once: its commands are keyed by it, so a second delivery of the
                // same comment under another X-GitHub-Delivery (a replayed body) carries out nothing again
                yield commands(ctx, commentId > 0 ? "comment/" + commentId : key, comment.path("user"),
                        comment.path("performed_via_github_app"), comment.path("body").asText(""), commentId);
            }
            case "pull_request_review_comment.created" -> {
                JsonNode comment = p.path("comment");
                long commentId = Payloads.id(comment.get("id"));
                // keyed as issue comments are: review comments have ids of their own kind
                yield commands(ctx, commentId > 0 ? "review-comment/" + commentId : key, comment.path("user"),
                        comment.path("performed_via_github_app"), comment.path("body").asText(""), null);
            }
            case "issues.opened" -> commands(ctx, Payloads.id(p.path("issue").get("id")) > 0 ? "issue/"
                    + Payloads.id(p.path("issue").get("id")) + "/opened" : key, p.path("issue").path("user"),
                    p.path("issue").path("performed_via_github_app"), p.path("issue").path("body").asText(""), null);
            case "issues.labeled" -> labeled(ctx, key, p.path("label").path("name").asText(""), p.path("sender"));
            case "issues.closed" -> {
                String login = p.path("sender").path("login").asText("someone");
                yield (progress, save, unrouted) -> closed(ctx, login);
            }
            default -> {
                LOG.debug("delivery {}: {}.{} needs no action", d.id(), d.event(), action);
                yield NOTHING;
            }
        };
        return (progress, save) -> {
            broken.ifPresent(outbox::enqueue);
            List<Unrouted> unrouted = new ArrayList<>();
            step.run(progress, save, unrouted);
            mirror.sync(ctx.local(), ref, issueNumber, ctx.installation());
            // the ledger as this delivery leaves it (on PostgreSQL the transaction holds it: no round trip)
            Optional<Ledger> left = unrouted.isEmpty() ? Optional.empty() : ctx.local().ledgers().read(issueNumber);
            return () -> afterCommit(ctx, unrouted, left);
        };
    }

    /** The part of a delivery that changes state, inside the worker's unit. */
    @FunctionalInterface
    private interface Step {
        void run(Progress progress, Consumer<Progress> save, List<Unrouted> unrouted);
    }

    /** A delivery about an issue that changes nothing of it. */
    private static final Step NOTHING = (progress, save, unrouted) -> { };

    /**
     * Once the delivery's changes are committed: each new question still waiting for its round's
     * answer in {@code ledger} (as the delivery left it) goes to its target's channel (an answer
     * it gives is recorded and posted; a channel's note, like a failure, is a reply of its own),
     * then the monitor runs for the repository. A crash before this leaves a question unrouted
     * until the monitor finds it stale and asks again.
     */
    private void afterCommit(IssueContext ctx, List<Unrouted> unrouted, Optional<Ledger> ledger) {
        List<Effect> replies = new ArrayList<>();
        boolean recorded = false;
        // routing one question records at most its own answer, never another's round: one ledger for all
        for (Unrouted u : unrouted) {
            ClarificationRecord asked = u.asked().record();
            Optional<ClarificationRecord> now = ledger.flatMap(l -> l.find(asked.id()));
            if (now.isEmpty() || now.get().status() != Status.PENDING || now.get().round() != asked.round()) {
                continue; // a later command of the same comment moved it on
            }
            Outcome routed = ctx.local().engine().route(u.asked());
            // route() gives back what it was given when the channel recorded nothing (a person will answer)
            recorded |= routed != u.asked();
            List<String> notes = new ArrayList<>(routed.notes());
            notes.removeAll(u.asked().notes());
            if (!notes.isEmpty()) {
                replies.add(new Effect.Comment(u.key() + "/channel", ctx.installation(), ctx.repo(), ctx.issue(),
                        CommandRunner.notesReply(routed.record(), notes)));
            }
        }
        if (recorded || !replies.isEmpty()) {
            // what a channel answered comes first on the issue, then what the hub says about it; when
            // no channel recorded or said anything, the delivery's own sync left the issue in step
            mirror.sync(ctx.local(), ctx.repo(), ctx.issue(), ctx.installation(), () -> replies.forEach(outbox::enqueue));
        }
        pacing.after(ctx.repo().stateKey(), () -> {
            runMonitor(ctx);
            outbox.sync(); // what the pass queued is on disk before it is sent (files; nothing on PostgreSQL)
        });
    }

    /**
     * After a command that came from elsewhere than a delivery (a remote MCP call) committed: the
     * repository's monitor pass at its pace, as after a comment.
     */
    public void afterRemoteCommand(IssueContext ctx) {
        pacing.after(ctx.repo().fullName(), () -> {
            runMonitor(ctx);
            outbox.sync();
        });
    }

    /** Whether the event may run a command (so the repository's config matters). */
    private boolean mayAct(String eventAction, JsonNode p) {
        return switch (eventAction) {
            case "issue_comment.created", "pull_request_review_comment.created" -> {
                JsonNode c = p.path("comment");
                String body = c.path("body").asText("");
                yield c.path("performed_via_github_app").path("id").asLong(-1) != appId && !body.contains(OUR_MARKERS)
                        && !CommandParser.parse(body).isEmpty();
            }
            case "issues.opened" -> !CommandParser.parse(p.path("issue").path("body").asText("")).isEmpty();
            // the trigger prefix may be the repository's own ([labels] trigger_prefix): known only once
            // its file is read, which costs at most one call a minute per repository
            case "issues.labeled" -> true;
            case "issues.closed" -> true;
            default -> false;
        };
    }

    /** The reply naming the broken {@code .github/agentx.toml}: the server's config applies meanwhile. */
    static String brokenConfig(String problem) {
        return "**agentx**: `" + RepoConfigMerge.PATH + "` on the default branch is not used, so the server's "
                + "configuration applies until it is fixed:\n\n" + MarkdownRenderer.quote(problem)
                + "\n\nA repository may set " + RepoConfigMerge.ALLOWED + "; answer channels that run "
                + "programs or call URLs, secrets and autonomy are the server's. See docs/github-app.md, "
                + "'Per-repository configuration'.";
    }

    private boolean ignoredAuthor(AgentxConfig config, JsonNode user, JsonNode viaApp, String body) {
        if (viaApp.path("id").asLong(-1) == appId || body.contains(OUR_MARKERS)) {
            return true;
        }
        String login = user.path("login").asText("");
        boolean bot = "Bot".equals(user.path("type").asText("")) || login.toLowerCase(Locale.ROOT).endsWith("[bot]");
        // A bot acts only when agentx.toml names it in [roles] (an agent working as a GitHub App).
        return login.isEmpty() || (bot && !actors.with(config).listedByLogin(login));
    }

    /**
     * The commands of a comment (or an issue's body), parsed now; the sender's roles are looked
     * up now too (a team's members may take an API call), so that none is made while the
     * delivery's changes hold the issue's ledger.
     */
    private Step commands(IssueContext ctx, String key, JsonNode user, JsonNode viaApp, String body, Long commentId) {
        if (ignoredAuthor(ctx.local().config(), user, viaApp, body)) {
            return NOTHING;
        }
        List<CommentCommand> commands = CommandParser.parse(body);
        if (commands.isEmpty()) {
            return NOTHING;
        }
        if (commands.size() > MAX_COMMANDS) {
            LOG.warn("delivery {}: {} commands in one comment, over the limit of {}; none carried out", key,
                    commands.size(), MAX_COMMANDS);
            return (progress, save, unrouted) -> {
                outbox.enqueue(reply(ctx, key + "/too-many/reply", "This comment has " + commands.size()
                        + " `/clarify` commands; at most " + MAX_COMMANDS + " per comment are carried out, so none of "
                        + "them was. Split them over several comments."));
                Effect confused = reaction(ctx, key, commentId, true);
                if (confused != null) {
                    outbox.enqueue(confused);
                }
            };
        }
        String login = user.path("login").asText();
        runner.lookUp(ctx, login, commands);
        return (progress, save, unrouted) -> {
            boolean refused = progress.refused();
            Progress at = progress;
            for (int i = at.commandsDone(); i < commands.size(); i++) {
                CommandRunner.Result r = run(ctx, login, commands.get(i), key + "/" + i);
                refused |= !r.accepted();
                at = new Progress(i + 1, refused, at.attempts(), at.notBefore());
                if (r.unrouted() != null) {
                    unrouted.add(new Unrouted(r.unrouted(), key + "/" + i));
                }
                // the last command's reply and the comment's reaction share one outbox sync
                Effect last = i == commands.size() - 1 ? reaction(ctx, key, commentId, refused) : null;
                afterCommand(ctx, key + "/" + i + "/reply", r, last, at, save);
            }
        };
    }

    /** The reaction on the comment that gave the commands; null for a review comment's, whose reply says it all. */
    private static Effect reaction(IssueContext ctx, String key, Long commentId, boolean refused) {
        if (ctx.codeLine() != null) {
            return null;
        }
        return new Effect.Reaction(key + "/reaction", ctx.installation(), ctx.repo(), ctx.issue(), commentId,
                refused ? "confused" : "+1");
    }

    /**
     * {@code clarify:<role>} (the trigger prefix of the repository's config): a blocking clarification
     * from the labeler's role to that role; the label is then removed.
     */
    private Step labeled(IssueContext ctx, String key, String label, JsonNode sender) {
        Labels names = ctx.local().config().labels();
        Optional<String> trigger = names.triggerTarget(label);
        if (trigger.isEmpty()) {
            return NOTHING;
        }
        String target = trigger.get();
        String login = sender.path("login").asText("");
        if (ignoredAuthor(ctx.local().config(), sender, sender.path("none"), "")) {
            // a labeler the app does not act for gets only the removal
            return (progress, save, unrouted) -> {
                if (progress.commandsDone() == 0) {
                    outbox.enqueue(removeTrigger(ctx, key, label));
                }
            };
        }
        String topic = ctx.title().isBlank() ? "issue #" + ctx.issue() : ctx.title().strip();
        if (topic.codePointCount(0, topic.length()) > Validation.MAX_TOPIC) {
            topic = topic.substring(0, topic.offsetByCodePoints(0, Validation.MAX_TOPIC - 3)) + "...";
        }
        String source = "label " + label;
        CommentCommand ask = target.isEmpty() ? new CommentCommand.Invalid(source, "the label names no role; "
                + "use " + names.triggerPrefix() + "<role>, like " + names.triggerPrefix() + "architect")
                : new CommentCommand.Ask(source, target, true, topic, "Please clarify issue #" + ctx.issue()
                + ": " + ctx.title().strip());
        runner.lookUp(ctx, login, List.of(ask));
        return (progress, save, unrouted) -> {
            // The question is asked once: a retry after a later step failed finds it done, its attempt
            // having queued the trigger's removal before recording it.
            if (progress.commandsDone() > 0) {
                return;
            }
            CommandRunner.Result r = run(ctx, login, ask, key + "/0");
            if (r.unrouted() != null) {
                unrouted.add(new Unrouted(r.unrouted(), key + "/0"));
            }
            // the trigger's removal shares the question's outbox sync
            afterCommand(ctx, key + "/0/reply", r, removeTrigger(ctx, key, label), new Progress(1, !r.accepted(),
                    progress.attempts(), progress.notBefore()), save);
        };
    }

    private static Effect removeTrigger(IssueContext ctx, String key, String label) {
        return new Effect.RemoveLabel(key + "/remove-trigger", ctx.installation(), ctx.repo(), ctx.issue(), label);
    }

    /**
     * After a command ran: the issue is brought in step (its new thread entries queued first, so
     * they come before the reply on GitHub), the reply and {@code then} (null: none) are queued and
     * the command is recorded as done after them, so a retry never carries it out again; one
     * outbox sync makes all of it durable (with the issue's mirror state) before anything else
     * runs. The record is made even when bringing the issue in step failed (a full disk): the
     * retry does that part again, which is harmless.
     */
    private void afterCommand(IssueContext ctx, String replyKey, CommandRunner.Result r, Effect then, Progress done,
                              Consumer<Progress> save) {
        boolean[] queued = {false};
        Runnable queueReply = () -> {
            if (r.reply() != null) {
                outbox.enqueue(reply(ctx, replyKey, r.reply()));
            }
            if (then != null) {
                outbox.enqueue(then);
            }
            save.accept(done);
            queued[0] = true;
        };
        RuntimeException inStep = null;
        try {
            mirror.sync(ctx.local(), ctx.repo(), ctx.issue(), ctx.installation(), queueReply);
        } catch (RuntimeException e) {
            inStep = e;
        }
        try {
            if (!queued[0]) {
                queueReply.run(); // bringing the issue in step failed before it came to the reply
            }
            outbox.sync(); // nothing left to sync if the mirror's sync came after the record
        } catch (RuntimeException e) {
            if (inStep != null) {
                e.addSuppressed(inStep);
            }
            throw e;
        }
        if (inStep != null) {
            throw inStep;
        }
    }

    /** A reply to a command: in the review thread of a review comment's, else on the conversation. */
    private static Effect reply(IssueContext ctx, String key, String body) {
        Long thread = ctx.codeLine() == null ? null : ctx.codeLine().reviewComment();
        return thread != null ? new Effect.ReviewReply(key, ctx.installation(), ctx.repo(), ctx.issue(), thread, body)
                : new Effect.Comment(key, ctx.installation(), ctx.repo(), ctx.issue(), body);
    }

    /** Runs a command as the request {@code request}: carried out again after a crash, it changes nothing. */
    private CommandRunner.Result run(IssueContext ctx, String login, CommentCommand command, String request) {
        CommandRunner.Result r = runner.run(ctx, login, command, request);
        metrics.command(command.getClass().getSimpleName().toLowerCase(Locale.ROOT), r.accepted());
        return r;
    }

    /** Closing the issue abandons its active clarifications. */
    private void closed(IssueContext ctx, String login) {
        List<ClarificationRecord> active = ctx.local().ledgers().read(ctx.issue()).map(Ledger::active).orElse(List.of());
        for (ClarificationRecord r : active) {
            try {
                ctx.local().engine().execute(new ClarifyCommand.Abandon(r.id(), login, "issue #" + ctx.issue()
                        + " was closed"));
            } catch (ClarifyException e) {
                if (e.code() == dev.agentx.clarify.protocol.ErrorCode.LOCK_TIMEOUT) {
                    throw e;
                }
                LOG.info("{} not abandoned on close: {}", r.id(), e.getMessage());
            }
        }
    }

    /**
     * The repository's monitor pass and the mirrors of the issues it changed (which queue the
     * stale notices and escalations it calls for), as one unit of the store: on PostgreSQL a
     * record is marked stale and its notice claimed in the same transaction. A pass that changes
     * nothing writes nothing. On the file store each write is its own; a notice a crash kept
     * from the outbox after its record's stale mark is queued by the issue's next sync
     * ({@link IssueMirror#STALE_NOTICE_WINDOW}).
     */
    private void runMonitor(IssueContext ctx) {
        unit.run(() -> {
            Set<Integer> issues = new LinkedHashSet<>();
            for (Outcome o : monitor.run(ctx.local())) {
                if (o.record() != null) {
                    issues.add(o.issue());
                }
            }
            for (int issue : issues) {
                mirror.sync(ctx.local(), ctx.repo(), issue, ctx.installation());
            }
            return null;
        });
    }
}
