package dev.agentx.clarify.github.outbox;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.github.api.GitHubGateway;
import dev.agentx.clarify.github.notify.NotificationLog;
import dev.agentx.clarify.github.notify.ReceiverHttp;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.store.Replicas;
import dev.agentx.clarify.store.UnitOfWork;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ObjLongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The durable queue of effects on GitHub, kept in {@code outbox/journal}: the one place to start
 * reading the outbox. An effect is recorded on disk before any network call and recorded as done
 * only once GitHub confirmed it, so a crash or an outage loses nothing. Effects of one issue go
 * out in the order they were queued; one that fails holds back the later effects of its issue (so
 * a question never appears after its answer). Different issues are sent side by side.
 *
 * <p>This class only hands the work to its parts, each with one job:
 * <ul>
 *   <li>{@link EffectQueue}: storage. The effects queued per issue, the keys queued or done (each
 *       remembered for {@link EffectQueue#KEEP_DONE}), in memory and in the journal with group
 *       commit, compacted; {@link OutboxNotes}: the notes kept in the same journal;</li>
 *   <li>{@link EffectsInUnit}: effects queued inside the store's unit, claimed with it and queued
 *       once it committed;</li>
 *   <li>{@link SendLoop}: the claim-send-mark loop over an issue's effects, the same for every
 *       kind;</li>
 *   <li>{@link EffectSenders}: what each kind of effect calls ({@link CommentSender}: a comment
 *       with its hidden tag, looked up before and after a send that may repeat another);</li>
 *   <li>{@link RetryPolicy}: when a failed attempt is tried again (server errors and lost
 *       connections back off exponentially, 10 s doubling to 10 min, or GitHub's Retry-After;
 *       other 4xx answers are final: the effect moves to {@code failed/} with the reason);</li>
 *   <li>{@link RateLimitHolds}: a rate limit holds back its whole installation, on every replica;</li>
 *   <li>{@link ReplicaClaims}: among replicas on one database an effect is sent by the replica
 *       that claimed it first; the claims of a replica that is gone are taken over;</li>
 *   <li>{@link NotificationSender}: a notification to a {@code [[notify]]} receiver, in a line of
 *       its receiver's (not its issue's) and on threads of their own, with its own retry policy
 *       ({@link NotificationRetry}: backoff with jitter for up to 24 hours).</li>
 * </ul>
 * Here: which issues (and receivers' lines) are handed to the sender threads, and when ({@link
 * #sendQueued}, {@link #flush()}). Every part logs as {@code Outbox}.
 */
public final class Outbox {
    private static final Logger LOG = LoggerFactory.getLogger(Outbox.class);

    /** Issues with effects queued since their last flush. */
    private final Set<String> dirty = ConcurrentHashMap.newKeySet();
    final EffectQueue queue; // package-private for a test
    private final OutboxNotes notes;
    private final EffectsInUnit inUnit;
    private final ReplicaClaims claims;
    private final RateLimitHolds holds;
    private final CommentSender<Effect.Comment> comments;
    private final SendLoop loop;
    private final ReceiverHttp receivers;
    /**
     * The threads that send the receivers' lines of notifications, made by the first {@link
     * #sendQueued} (the server's asynchronous mode); null until then, when {@link #flush()} sends
     * them itself. Apart from the senders of GitHub's effects, so a receiver that does not answer
     * never holds up a comment.
     */
    private volatile ThreadPoolExecutor notifiers;
    private final Object notifiersMade = new Object();
    /** Receivers' lines sent side by side, at most: one thread each while it waits for its receiver. */
    static final int NOTIFIERS = 32;
    /** Where each effect goes now, and which wait ({@link #follow}). */
    private volatile Destinations destinations = Destinations.AS_QUEUED;

    /** The result of one flush. */
    public record Flush(int done, int failed, int waiting) {
        Flush plus(Flush o) {
            return new Flush(done + o.done, failed + o.failed, waiting + o.waiting);
        }
    }

    public Outbox(Path dir, GitHubGateway github, Clock clock, ServerMetrics metrics) {
        this(dir, github, clock, metrics, Replicas.alone("outbox"));
    }

    /** {@code replicas}: an effect is sent only by the replica that claims its key first. */
    public Outbox(Path dir, GitHubGateway github, Clock clock, ServerMetrics metrics, Replicas replicas) {
        this(dir, github, clock, metrics, replicas, UnitOfWork.NONE);
    }

    /**
     * {@code unit}: the store's unit; effects queued inside one are claimed with it and queued
     * here once it committed ({@link #enqueue(Effect)}).
     */
    public Outbox(Path dir, GitHubGateway github, Clock clock, ServerMetrics metrics, Replicas replicas,
                  UnitOfWork unit) {
        this(dir, github, clock, metrics, replicas, unit, ReceiverHttp.standard());
    }

    /** {@code receivers}: the HTTP client of notifications ({@link Effect.Notification}), closed with the outbox. */
    public Outbox(Path dir, GitHubGateway github, Clock clock, ServerMetrics metrics, Replicas replicas,
                  UnitOfWork unit, ReceiverHttp receivers) {
        this.queue = EffectQueue.open(dir, clock, dirty::add);
        this.notes = queue.notes();
        this.claims = new ReplicaClaims(replicas, queue, clock);
        this.inUnit = new EffectsInUnit(unit, queue, claims);
        this.holds = new RateLimitHolds(replicas, clock);
        this.comments = CommentSender.conversation(github);
        this.receivers = receivers;
        NotificationSender notifications = new NotificationSender(receivers, new NotificationLog(dir), metrics, clock,
                NotificationRetry.STANDARD);
        this.loop = new SendLoop(queue, claims, holds, EffectSenders.gitHub(github, comments, notifications, clock),
                metrics, clock, () -> destinations);
    }

    /**
     * Sends each effect where {@code d} says its repository is now (its current name and
     * installation), and holds back the effects of repositories that may not be posted to, up to
     * {@link Destinations#RETENTION}. Without it every effect goes where it was queued.
     */
    public void follow(Destinations d) {
        this.destinations = d;
    }

    /** Sets who is told of each comment posted, with its id (the dashboard links to it); never fails a send. */
    public void onCommentPosted(ObjLongConsumer<Effect.Comment> listener) {
        comments.onPosted(listener);
    }

    /** This replica's name, as claims and issue notes record it. */
    public String replica() {
        return claims.replica();
    }

    /**
     * Queues the effect: written to the journal, so it survives the process ending, and durable
     * against a machine crash at the next {@link #sync()} (an effect is never sent before that).
     * False when its key was queued or done before. Inside the store's unit ({@link
     * UnitOfWork#open}) it is queued only once the unit committed, claimed with it.
     */
    public boolean enqueue(Effect effect) {
        if (inUnit.open()) {
            return inUnit.enqueue(effect);
        }
        return queue.add(effect, false, null, false);
    }

    /**
     * Inside the calling thread's unit: the effects of the issue queued in this unit so far are to
     * go out after those of {@code hashes}, which another replica queued (and claimed) before: the
     * first of them waits until those are {@link Replicas#unfinished finished} (sent or given up on
     * by whoever holds them), holding back the rest, as effects of one issue wait for each other
     * on one replica. For the next entry of a thread applied on another replica than the entry
     * before. Without an open unit, or without effects of the issue queued in it, nothing waits.
     */
    public void after(long installation, RepoRef repo, int issue, Collection<String> hashes) {
        inUnit.after(installation, repo, issue, hashes);
    }

    /** The key hashes of the effects of the issue queued in the calling thread's open unit so far, in order. */
    public List<String> queuedInUnit(long installation, RepoRef repo, int issue) {
        return inUnit.queued(installation, repo, issue);
    }

    /**
     * Makes every effect the calling thread queued durable, and every effect it tried to queue
     * that was pending already (one fsync shared with other threads, none if they are durable).
     * Whoever records that effects were queued (the inbox saving a delivery's progress, the issue
     * mirror its state) calls this first, on the thread that queued them, so a machine crash cannot
     * keep the record and lose the effects.
     */
    public void sync() {
        queue.sync();
    }

    /**
     * Records {@code value} (written as JSON) under {@code name}, replacing the note before it,
     * after the effects this thread queued: the thread's next {@link #sync()} makes it durable
     * together with them ({@link OutboxNotes}).
     */
    public void note(String name, Object value) {
        notes.put(name, value);
    }

    /**
     * Forgets the note {@code name}, if there is one. The record is not waited for: should a crash
     * lose it, the note is back at the next start, so forget only what may come back.
     */
    public void forget(String name) {
        notes.forget(name);
    }

    /** The names of the notes that start with {@code prefix}. */
    public List<String> noteNames(String prefix) {
        return notes.names(prefix);
    }

    /** The latest note recorded under {@code name}, read as {@code type}, if any. */
    public <T> Optional<T> note(String name, Class<T> type) {
        return notes.get(name, type);
    }

    /**
     * The notes whose names start with {@code prefix} in the outbox journal of {@code dir}, by name,
     * read without changing the file (a server may be appending to it; a half-written last record
     * is left out): what {@code agentx store copy} hands over. Empty without a journal.
     */
    public static Map<String, JsonNode> notesIn(Path dir, String prefix) {
        return OutboxNotes.in(dir, prefix);
    }

    /**
     * The effects still queued (not done, not given up on) in the outbox journal of {@code dir},
     * in their order, read without changing the file (a server may be appending to it; a
     * half-written last record is left out): what {@code agentx sync} must not rebuild over.
     * Empty without a journal.
     */
    public static List<Effect> pendingIn(Path dir) {
        return EffectQueue.pendingIn(dir);
    }

    /** Effects queued, not yet done or failed. */
    public int size() {
        return queue.size();
    }

    /** The journal's fdatasyncs since the outbox was opened (for tests). */
    public long journalSyncs() {
        return queue.journalSyncs();
    }

    /** Records written to the journal since the outbox was opened that are known to be on disk (for tests). */
    long journalDurable() {
        return queue.journalDurable();
    }

    /**
     * Hands each issue with effects queued since its last flush to {@code senders}, which send the
     * issues side by side (each issue's effects in order). What a rejected task would have sent
     * stays queued for the next flush. An issue whose first effect waits for another replica is
     * handed over again on {@code later} (doubling waits, from {@link IssueQueue#FIRST_RECHECK});
     * null: at the next flush.
     */
    public void sendQueued(Executor senders, ScheduledExecutorService later) {
        for (String key : List.copyOf(dirty)) {
            if (dirty.remove(key)) {
                IssueQueue q = queue.issue(key);
                if (q == null) {
                    continue;
                }
                Executor by = EffectQueue.notificationLine(key) ? notifiers() : senders;
                try {
                    by.execute(() -> {
                        try {
                            loop.flush(q);
                            claims.markDoneSoon(later);
                        } catch (RuntimeException e) {
                            LOG.error("outbox: sending the effects of {} failed; they stay queued: {}", key,
                                    e.toString(), e);
                        }
                        Duration recheck = q.recheck;
                        if (recheck != null && later != null && q.recheckScheduled.compareAndSet(false, true)) {
                            try {
                                later.schedule(() -> {
                                    q.recheckScheduled.set(false);
                                    dirty.add(key);
                                    sendQueued(senders, later);
                                }, recheck.toMillis(), TimeUnit.MILLISECONDS);
                            } catch (RejectedExecutionException e) {
                                q.recheckScheduled.set(false); // stopping: the final flush or the next start sends them
                            }
                        }
                    });
                } catch (RejectedExecutionException e) {
                    dirty.add(key); // stopping: the final flush or the next start sends them
                }
            }
        }
    }

    /**
     * Sends every effect that is due, issue by issue, each issue's in order, after taking over
     * what replicas that are gone left and the rate limits other replicas met; then marks the
     * claims of what was sent done and compacts the journal if it has grown. The worker's tick.
     * Never throws for a GitHub failure.
     */
    public Flush flush() {
        claims.adoptLeftovers();
        holds.refresh();
        Flush total = new Flush(0, 0, 0);
        ThreadPoolExecutor notifying = notifiers;
        for (IssueQueue q : queue.issues()) {
            dirty.remove(q.key);
            if (notifying != null && EffectQueue.notificationLine(q.key)) {
                handToNotifiers(notifying, q); // a receiver that does not answer never holds up the tick
                continue;
            }
            total = total.plus(loop.flush(q));
        }
        claims.markDone();
        queue.maybeCompact();
        return total;
    }

    /** The notifiers, made at first use. */
    private ThreadPoolExecutor notifiers() {
        ThreadPoolExecutor n = notifiers;
        if (n != null) {
            return n;
        }
        synchronized (notifiersMade) {
            if (notifiers == null) {
                AtomicInteger count = new AtomicInteger();
                ThreadPoolExecutor made = new ThreadPoolExecutor(NOTIFIERS, NOTIFIERS, 30, TimeUnit.SECONDS,
                        new LinkedBlockingQueue<>(), r -> {
                            Thread t = new Thread(r, "agentx-notify-" + count.incrementAndGet());
                            t.setDaemon(true);
                            t.setPriority(Thread.MIN_PRIORITY);
                            return t;
                        });
                made.allowCoreThreadTimeOut(true);
                notifiers = made;
            }
            return notifiers;
        }
    }

    private void handToNotifiers(ThreadPoolExecutor notifying, IssueQueue q) {
        try {
            notifying.execute(() -> {
                try {
                    loop.flush(q);
                    claims.markDone();
                } catch (RuntimeException e) {
                    LOG.error("outbox: sending the notifications of {} failed; they stay queued: {}", q.key,
                            e.toString(), e);
                }
            });
        } catch (RejectedExecutionException e) {
            dirty.add(q.key); // stopping: the next start sends them
        }
    }

    /**
     * Stops the notifiers: no new line is taken up, and an attempt under way gets up to 5 s to end
     * (it is not interrupted: an interrupt would close the journal's file under every thread). What
     * was not sent is sent at the next start, with the same delivery ids. Then closes the
     * notifications' HTTP client. The server's last step.
     */
    public void close() {
        ThreadPoolExecutor n = notifiers;
        if (n != null) {
            n.shutdown();
            try {
                if (!n.awaitTermination(5, TimeUnit.SECONDS)) {
                    LOG.info("outbox: notifications still being sent at the stop are sent again at the next start");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        try {
            receivers.close();
        } catch (java.io.IOException e) {
            LOG.warn("outbox: closing the notifications' HTTP client: {}", e.toString());
        }
    }

    /** Forgets done keys older than {@link EffectQueue#KEEP_DONE} and compacts the journal. */
    public void prune() {
        queue.prune();
    }

    /**
     * Has the next flush look again for effects this replica claimed and does not have queued
     * ({@link ReplicaClaims#checkOwnClaimsAgain}): after a unit failed whose commit may have
     * reached the database all the same.
     */
    public void checkOwnClaimsAgain() {
        claims.checkOwnClaimsAgain();
    }
}
