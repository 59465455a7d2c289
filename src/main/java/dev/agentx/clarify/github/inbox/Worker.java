package dev.agentx.clarify.github.inbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.github.Payloads;
import dev.agentx.clarify.github.outbox.Outbox;
import dev.agentx.clarify.metrics.ServerMetrics;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.store.DeliveryQueue;
import dev.agentx.clarify.store.InboundDelivery;
import dev.agentx.clarify.store.Replicas;
import dev.agentx.clarify.store.UnitOfWork;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Works through the inbox and sends what the deliveries queued in the outbox.
 *
 * <p>Order: deliveries with the same {@link dev.agentx.clarify.github.Payloads#orderKey order key}
 * (the same issue) form a line and are processed one at a time, in the order received; on a
 * queue that replicas share, a line waits while an earlier delivery of its issue is held by
 * another replica
 * ({@link DeliveryQueue.Turn.Wait}), and the tick takes up deliveries left by replicas that are
 * gone ({@link DeliveryQueue#adoptable}). Lines run side by side on
 * {@link #LANES} threads, so a slow issue (a lock held by an agent, a slow permission check)
 * does not hold up the others, and the file system's waits overlap. A delivery that fails (GitHub
 * unreachable while checking a permission, a lock timeout) stays first in its line and is tried
 * again after a backoff; after {@link #MAX_ATTEMPTS} it moves to the inbox's {@code failed/}.
 *
 * <p>Asynchronous (the server's mode): a delivery is handed to a lane as soon as it is queued;
 * after each delivery the lane hands the issues it queued effects for to {@link #SENDERS} sender
 * threads and goes on, so a lane never waits for GitHub while posting; a tick every
 * {@link #TICK} sends effects whose wait is over and takes up lines whose retry is due. While
 * webhook requests queue up, lanes apply deliveries' changes one at a time ({@link AckPriority});
 * what a delivery looks up on GitHub before and hands to answer channels after does not count.
 * Synchronous (tests): {@link #wake()} does all the work on the caller's thread before the webhook is answered, so
 * tests need no sleeps.
 */
public final class Worker implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Worker.class);
    public static final Duration TICK = Duration.ofSeconds(5);
    static final int MAX_ATTEMPTS = 8;
    /**
     * Lines worked on side by side (threads). A lane mostly waits: for fsyncs (which concurrent
     * lanes share through the file system's journal commits), a permission check or an agent's
     * lock, so there are more lanes than cores; bench/README.md has the figures behind the number.
     */
    public static final int LANES = 12;
    /** Deliveries of one line a lane works through before other lines get a turn. */
    static final int TURN = 16;
    /**
     * Threads sending effects to GitHub, issues side by side. Few: GitHub asks integrators not to
     * send many requests for one installation at once (secondary rate limits).
     */
    public static final int SENDERS = 4;
    /**
     * How long the lanes go on taking up deliveries once the worker is closing (the webhook takes no
     * more by then): the inbox is usually worked off, so a replica that is scaled down leaves no
     * acknowledged delivery behind on its volume. Within the 30 s a stop is given (Kubernetes'
     * grace period, systemd's TimeoutStopSec), with time left for the outbox's last flush.
     */
    static final Duration DRAIN = Duration.ofSeconds(20);
    /**
     * How soon a line waiting for an earlier delivery another replica holds is tried again, should
     * that replica's signal of its done mark not come first ({@link DeliveryQueue#onLineFreed}).
     */
    static final Duration WAIT_ELSEWHERE = Duration.ofMillis(200);
    /** Replicas' claims of effects are kept this long: longer than GitHub keeps a delivery. */
    static final Duration KEEP_CLAIMS = Duration.ofDays(7);
    /** The lease under which one replica forgets old claims; longer than the day between its runs. */
    static final String FORGET_CLAIMS = "forget-claims";
    static final Duration FORGET_CLAIMS_LEASE = Duration.ofDays(1).plusHours(1);

    private final Replicas replicas;

    private final DeliveryQueue inbox;
    private final DeliveryProcessor handler;
    private final UnitOfWork unit;
    private final Outbox outbox;
    private final Clock clock;
    private final boolean synchronous;
    private final ServerMetrics metrics;
    private final ObjectMapper json = JsonSupport.mapper();
    private final AckPriority priority = new AckPriority(LANES);
    private final Map<String, Line> lines = new ConcurrentHashMap<>();
    private final Set<Long> tracked = ConcurrentHashMap.newKeySet();
    /** Deliveries (by number) whose last take found an earlier one of their line held by another replica. */
    private final Set<Long> waitingElsewhere = ConcurrentHashMap.newKeySet();
    private final Map<Thread, Instant> busySince = new ConcurrentHashMap<>();
    /**
     * Deliveries (by number) whose progress is a note in the outbox journal ({@link #PROGRESS}),
     * forgotten once the inbox has their done record on disk.
     */
    private final Set<Long> progressNoted = ConcurrentHashMap.newKeySet();
    /** The outbox note holding a delivery's progress: {@code inbox-progress/<number>}. */
    static final String PROGRESS = "inbox-progress/";
    private final Object maintenance = new Object();
    private volatile ExecutorService lanes;
    private volatile ExecutorService senders;
    private volatile ScheduledExecutorService ticker;
    /**
     * The outbox's short timed work (a look again at an issue waiting for another replica, the
     * done marks of what the senders sent): a thread of its own, since the tick can take seconds
     * (its flush sends what is due one effect after another), and other replicas wait for both.
     */
    private volatile ScheduledExecutorService outboxTimers;
    private Instant lastPrune = Instant.MIN;
    private volatile boolean closed;
    /** While closing: until when (System.nanoTime) the lanes go on taking up deliveries. */
    private volatile long drainUntil;

    /** What readiness needs to know: whether the worker runs, and since when its longest-running delivery runs (or null). */
    public record Health(boolean alive, Instant drainingSince) {
    }

    /**
     * The deliveries of one order key in the queue's order (by number), whatever the order they were
     * handed over in; at most one thread works on them at a time.
     */
    private static final class Line {
        final String key;
        /**
         * By number: two deliveries of one issue acknowledged at the same moment are handed over by
         * their request threads in either order, and the shared queue takes them only in its own
         * ({@link DeliveryQueue.Turn.Wait} for the later one while the earlier is queued).
         */
        final PriorityQueue<DeliveryQueue.Queued> items =
                new PriorityQueue<>(Comparator.comparingLong(DeliveryQueue.Queued::seq));
        /** A thread has claimed the line. */
        boolean running;
        /** Its first delivery waits out a retry until then. */
        Instant notBefore;
        /** Removed from the map: a delivery for its key goes to a new line. */
        boolean retired;
        /** Another replica signalled that the line is free since its lane last took a delivery. */
        boolean freed;

        Line(String key) {
            this.key = key;
        }
    }

    public Worker(DeliveryQueue inbox, DeliveryProcessor handler, Outbox outbox, Clock clock, boolean synchronous,
                  ServerMetrics metrics) {
        this(inbox, handler, outbox, clock, synchronous, metrics, Replicas.alone("worker"));
    }

    /** {@code replicas}: one of them at a time forgets old claims (a lease). */
    public Worker(DeliveryQueue inbox, DeliveryProcessor handler, Outbox outbox, Clock clock, boolean synchronous,
                  ServerMetrics metrics, Replicas replicas) {
        this(inbox, handler, outbox, clock, synchronous, metrics, replicas, UnitOfWork.NONE);
    }

    /**
     * {@code unit}: the store's unit, in which each delivery's changes and its done mark are made
     * ({@link UnitOfWork#NONE}: each write on its own, the progress recorded after each command).
     */
    public Worker(DeliveryQueue inbox, DeliveryProcessor handler, Outbox outbox, Clock clock, boolean synchronous,
                  ServerMetrics metrics, Replicas replicas, UnitOfWork unit) {
        this.unit = unit;
        this.replicas = replicas;
        this.inbox = inbox;
        this.handler = handler;
        this.outbox = outbox;
        this.clock = clock;
        this.synchronous = synchronous;
        this.metrics = metrics;
        for (String name : outbox.noteNames(PROGRESS)) {
            progressNoted.add(Long.parseLong(name.substring(PROGRESS.length())));
        }
        forgetProgressOfDone(); // those left by a crash after their delivery was done with
        inbox.onQueued(this::submit);
        inbox.onLineFreed(this::lineFreed, this::everyLineFreed);
        inbox.queued().forEach(this::submit);
    }

    /**
     * How far the delivery got: the commands done as the outbox note says (written with each
     * command's effects), the attempts and the next try as the queue keeps them ({@code kept}).
     */
    private DeliveryQueue.Progress progressOf(DeliveryQueue.Queued q, DeliveryQueue.Progress kept) {
        if (unit.atomic()) {
            return kept; // no progress notes: an attempt that failed left nothing behind
        }
        return outbox.note(PROGRESS + q.seq(), DeliveryQueue.Progress.class)
                .filter(n -> n.commandsDone() > kept.commandsDone())
                .map(n -> new DeliveryQueue.Progress(n.commandsDone(), n.refused(), kept.attempts(), kept.notBefore()))
                .orElse(kept);
    }

    /** At shutdown: the done records on disk, so the next start processes nothing again. */
    private void syncDoneQuietly() {
        try {
            synchronized (maintenance) {
                forgetProgressOfDone();
            }
        } catch (RuntimeException e) {
            LOG.warn("cannot record which deliveries are done at shutdown (the inbox's journal, or the database); "
                    + "deliveries done since the last tick may be processed again at the next start (no command runs "
                    + "twice): {}", e.toString());
        }
    }

    /**
     * Makes the inbox's done records durable (so a machine crash makes the next start process again
     * at most a tick's deliveries) and forgets the progress notes of deliveries durably done with.
     */
    private void forgetProgressOfDone() {
        java.util.function.LongPredicate done = inbox.syncDone();
        for (Long n : List.copyOf(progressNoted)) {
            if (done.test(n)) {
                outbox.forget(PROGRESS + n);
                progressNoted.remove(n);
            }
        }
    }

    /** What the webhook tells of its requests in flight, so the lanes step back while acknowledgements queue up. */
    public AckPriority priority() {
        return priority;
    }

    public Health health() {
        boolean alive;
        synchronized (this) {
            alive = !closed && (synchronous || (lanes != null && !lanes.isShutdown()));
        }
        Instant since = busySince.values().stream().min(Comparator.naturalOrder()).orElse(null);
        return new Health(alive, since);
    }

    /** When the oldest delivery that is due (not waiting out a retry) was received, if any waits. */
    public Optional<Instant> oldestDue() {
        Instant now = clock.instant();
        Instant oldest = null;
        for (Line line : lines.values()) {
            synchronized (line) {
                DeliveryQueue.Queued head = line.items.peek();
                if (head == null || (line.notBefore != null && now.isBefore(line.notBefore))) {
                    continue;
                }
                if (oldest == null || head.receivedAt().isBefore(oldest)) {
                    oldest = head.receivedAt();
                }
            }
        }
        return Optional.ofNullable(oldest);
    }

    public synchronized void start() {
        if (synchronous || lanes != null || closed) {
            return;
        }
        AtomicInteger n = new AtomicInteger();
        lanes = Executors.newFixedThreadPool(LANES, r -> daemon(r, "agentx-worker-" + n.incrementAndGet()));
        OptionalInt starterNice = ThreadNice.ofCurrentThread();
        lanes.execute(() -> logPriority(starterNice, ThreadNice.ofCurrentThread()));
        AtomicInteger s = new AtomicInteger();
        senders = Executors.newFixedThreadPool(SENDERS, r -> daemon(r, "agentx-sender-" + s.incrementAndGet()));
        ticker = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "agentx-worker-tick"));
        outboxTimers = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "agentx-outbox-timers"));
        ticker.scheduleWithFixedDelay(this::tick, 0, TICK.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * A thread of the worker (lane, sender, tick): a daemon of the lowest priority, so that with
     * {@code -XX:ThreadPriorityPolicy=1} (the deployment's flags) Linux runs it at nice 4 and the
     * webhook's threads (nice 0) get the CPU first when both want it. On 2 cores this is what
     * keeps acknowledgements quick while the worker is busy (bench/README.md).
     */
    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.setPriority(Thread.MIN_PRIORITY);
        return t;
    }

    private static void logPriority(OptionalInt starter, OptionalInt lane) {
        if (starter.isEmpty() || lane.isEmpty()) {
            LOG.debug("worker: thread priorities unknown here (no /proc/thread-self/stat)");
        } else if (lane.getAsInt() > starter.getAsInt()) {
            LOG.info("worker: lanes and senders run at nice {}, below the webhook's threads (nice {}){}",
                    lane.getAsInt(), starter.getAsInt(), "root".equals(System.getProperty("user.name")) ? ""
                            : "; the JVM's warning at start about -XX:ThreadPriorityPolicy=1 concerns raising "
                                    + "priorities and does not apply");
        } else {
            LOG.info("worker: lanes and senders run at the webhook's priority (nice {}); the JVM flag "
                    + "-XX:ThreadPriorityPolicy=1 lets them step back for acknowledgements (bench/README.md)",
                    lane.getAsInt());
        }
    }

    /** New work arrived: do it now (synchronous); asynchronous lanes are handed each delivery as it is queued. */
    public void wake() {
        if (synchronous) {
            drain();
        }
    }

    private void submit(DeliveryQueue.Queued q) {
        if (!tracked.add(q.seq())) {
            return;
        }
        while (true) {
            Line line = lines.computeIfAbsent(q.key(), Line::new);
            boolean start;
            synchronized (line) {
                if (line.retired) {
                    continue;
                }
                line.items.add(q);
                if (line.items.peek() == q) {
                    line.notBefore = null; // a wait was the later delivery's, which now comes after q
                }
                start = claimForLane(line, clock.instant());
            }
            if (start) {
                dispatch(line);
            }
            return;
        }
    }

    /**
     * Another replica has done with the delivery a line of this one waited for: the line is taken
     * up now instead of at its next look ({@link #WAIT_ELSEWHERE}).
     */
    private void lineFreed(String key) {
        Line line = lines.get(key);
        if (line == null) {
            return;
        }
        boolean start;
        synchronized (line) {
            line.freed = true; // a lane taking its delivery now looks again at once should it find it waits
            DeliveryQueue.Queued head = line.items.peek();
            if (head == null || line.running || !waitingElsewhere.contains(head.seq())) {
                return; // not waiting for another replica (a retry's wait is not cut short)
            }
            line.notBefore = null;
            start = claimForLane(line, clock.instant());
        }
        if (start) {
            dispatch(line);
        }
    }

    /**
     * Signals of lines freed may have been missed (the store began listening for them after a
     * line's wait was marked, or listens anew after losing its connection): every line waiting for
     * another replica looks again now.
     */
    private void everyLineFreed() {
        lines.keySet().forEach(this::lineFreed);
    }

    /** Claims the line for a lane if it is idle and due; the caller holds the line's monitor. */
    private boolean claimForLane(Line line, Instant now) {
        return lanes != null && !closed && claim(line, now);
    }

    private static boolean claim(Line line, Instant now) {
        if (line.running || line.items.isEmpty()) {
            return false;
        }
        if (line.notBefore != null) {
            if (now.isBefore(line.notBefore)) {
                return false;
            }
            line.notBefore = null;
        }
        line.running = true;
        return true;
    }

    private void dispatch(Line line) {
        ExecutorService ex = lanes;
        try {
            if (ex == null) {
                throw new RejectedExecutionException("stopped");
            }
            ex.execute(() -> {
                if (work(line, TURN)) {
                    dispatch(line); // other lines get a turn first
                }
            });
        } catch (RejectedExecutionException e) {
            synchronized (line) {
                line.running = false; // stopping: the deliveries stay in the inbox on disk
            }
        }
    }

    /**
     * Works through a line the caller has claimed, at most {@code limit} deliveries. True when it
     * stopped at the limit with deliveries left (the line stays claimed); false when the line is
     * released (empty, waiting out a retry, or the worker is closing).
     */
    private boolean work(Line line, int limit) {
        for (int done = 0; ; done++) {
            DeliveryQueue.Queued head;
            synchronized (line) {
                head = line.items.peek();
                if (head == null || (closed && !synchronous && System.nanoTime() - drainUntil > 0)) {
                    line.running = false;
                    retireIfIdle(line);
                    return false;
                }
                if (done >= limit && !closed) { // closing: no new turns are dispatched, so a lane finishes its line
                    return true;
                }
                line.freed = false;
            }
            Instant retryAt;
            try {
                retryAt = process(head);
            } catch (RuntimeException e) {
                // the inbox itself failed (disk full, permissions): try the line again on a later tick
                LOG.error("worker: {}", e.toString(), e);
                retryAt = clock.instant().plus(TICK);
            }
            synchronized (line) {
                if (retryAt != null && line.items.peek() != head) {
                    continue; // an earlier delivery of the line was handed over meanwhile: it goes first
                }
                if (retryAt != null && line.freed && waitingElsewhere.contains(head.seq())) {
                    continue; // the replica it waited for signalled while it looked: look again now
                }
                if (retryAt != null) {
                    line.notBefore = retryAt;
                    line.running = false;
                    retakeAt(line, retryAt);
                    return false;
                }
                line.items.remove(head);
                tracked.remove(head.seq());
            }
            ExecutorService send = senders;
            if (!synchronous && send != null) {
                outbox.sendQueued(send, outboxTimers); // the lane goes on with its next delivery meanwhile
            }
        }
    }

    /**
     * Takes the line up again at {@code when} if that comes before the next tick (a line waiting
     * for another replica's delivery); later retries are the tick's.
     */
    private void retakeAt(Line line, Instant when) {
        ScheduledExecutorService t = ticker;
        Duration wait = Duration.between(clock.instant(), when);
        if (t == null || synchronous || wait.compareTo(TICK) >= 0) {
            return;
        }
        // rounded up, and a millisecond more: the scheduler keeps its own time, and a wake-up a hair
        // before the clock reaches the time finds the line not due and leaves it to the next tick
        long delayMicros = Math.max(0, (wait.toNanos() + 999) / 1000) + 1000;
        try {
            t.schedule(() -> {
                boolean start;
                synchronized (line) {
                    start = claimForLane(line, clock.instant());
                }
                if (start) {
                    dispatch(line);
                }
            }, delayMicros, TimeUnit.MICROSECONDS);
        } catch (RejectedExecutionException e) {
            // stopping: what is left stays queued for the next start or another replica
        }
    }

    private void retireIfIdle(Line line) {
        if (line.items.isEmpty() && !line.running && !line.retired) {
            line.retired = true;
            lines.remove(line.key, line);
        }
    }

    /**
     * Processes one delivery. Null when it is done with (processed, or moved to {@code failed/});
     * otherwise when to try it again.
     */
    private Instant process(DeliveryQueue.Queued q) {
        Instant now = clock.instant();
        boolean waitedBefore = waitingElsewhere.remove(q.seq());
        // in one transaction with its done mark, the turn may be checked by the mark instead of first
        DeliveryQueue.Turn turn = unit.atomic() ? inbox.takeProvisionally(q, now) : inbox.take(q, now);
        if (turn instanceof DeliveryQueue.Turn.Wait w) {
            // an earlier delivery about the same issue is held by another replica: its line goes first;
            // that replica signals when it is done with it (onLineFreed), else the line looks again then
            LOG.debug("delivery {} ({}) waits for an earlier delivery of its issue held by replica {}", q.id(),
                    q.event(), w.holder());
            waitingElsewhere.add(q.seq());
            if (!waitedBefore) {
                metrics.deliveryWaited(); // a delivery counts once, however often it looks
            }
            return now.plus(WAIT_ELSEWHERE);
        }
        if (turn instanceof DeliveryQueue.Turn.Gone g) {
            LOG.info("delivery {} ({}) is not this replica's to process ({}); dropped here", q.id(), q.event(), g.why());
            return null;
        }
        if (turn instanceof DeliveryQueue.Turn.Unreadable u) {
            inbox.fail(q, u.why());
            metrics.delivery(q.event(), "", "failed");
            return null;
        }
        DeliveryQueue.Turn.Mine mine = (DeliveryQueue.Turn.Mine) turn;
        DeliveryQueue.Progress progress = progressOf(q, mine.progress());
        if (progress.notBefore() != null && now.isBefore(progress.notBefore())) {
            return progress.notBefore(); // a retry planned before a restart
        }
        InboundDelivery d = mine.delivery();
        JsonNode payload = parse(d.body());
        String action = putContext(d, payload);
        busySince.put(Thread.currentThread(), now);
        long started = System.nanoTime();
        try {
            DeliveryProcessor.Changes changes = handler.prepare(d, payload);
            Runnable after = apply(q, progress, changes);
            afterCommit(d, after);
            LOG.info("delivery {} ({}{}) processed", d.id(), d.event(), action.isEmpty() ? "" : "." + action);
            // each delivery counts once in agentx_deliveries_total, at its final outcome; attempts
            // that will be retried are only timed (outcome "retry" of the processing histogram)
            metrics.deliveryAttempt(d.event(), "processed", started);
            metrics.delivery(d.event(), action, "processed");
            return null;
        } catch (RuntimeException e) {
            if (mine.provisional() && e instanceof ClarifyException c && c.code() == ErrorCode.LOCK_LOST) {
                // its turn had not come (or was another replica's): nothing of it committed; the
                // next take asks the queue, and waits or drops it as the queue says
                LOG.debug("delivery {} ({}) was not this replica's to finish yet; taking it again: {}", d.id(),
                        d.event(), e.getMessage());
                return clock.instant();
            }
            if (unit.atomic()) {
                // the transaction may have committed though this side saw it fail (its COMMIT's answer
                // lost): its effects' claims are then this replica's, and in no queue here
                outbox.checkOwnClaimsAgain();
            }
            DeliveryQueue.Progress before = progressOf(q, mine.progress());
            int attempts = before.attempts() + 1;
            if (attempts >= MAX_ATTEMPTS) {
                LOG.error("delivery {} ({}) failed {} times; moved to the inbox's failed/: {}", d.id(), d.event(),
                        attempts, e.toString());
                inbox.fail(q, "failed " + attempts + " times, last: " + e);
                metrics.deliveryAttempt(d.event(), "failed", started);
                metrics.delivery(d.event(), action, "failed");
                return null;
            }
            Duration wait = Duration.ofSeconds(5L << Math.min(attempts, 10));
            LOG.warn("delivery {} ({}) failed (attempt {}), retrying in {} s: {}", d.id(), d.event(), attempts,
                    wait.toSeconds(), e.toString(), e);
            Instant retryAt = now.plus(wait);
            inbox.saveProgress(q, new DeliveryQueue.Progress(before.commandsDone(), before.refused(), attempts, retryAt));
            metrics.deliveryAttempt(d.event(), "retry", started);
            return retryAt;
        } finally {
            busySince.remove(Thread.currentThread());
            clearContext();
        }
    }

    /**
     * Applies the delivery's changes and marks it done, as one of the lanes {@link AckPriority}
     * lets apply at once: the CPU's part of a delivery, with nothing inside that waits for GitHub or
     * an agent (looking up permissions comes before, in {@code prepare}; routing questions to
     * channels after, in what this returns). Returns what is left for after the commit.
     */
    private Runnable apply(DeliveryQueue.Queued q, DeliveryQueue.Progress progress, DeliveryProcessor.Changes changes) {
        boolean gated = !synchronous;
        if (gated) {
            priority.laneStarting(); // the webhook's acknowledgements first
        }
        try {
            if (unit.atomic()) {
                // one transaction: the delivery's changes, their effects' claims and its done mark
                // commit together, or nothing of them does and the next attempt starts afresh
                return unit.run(() -> {
                    if (gated) {
                        unit.join(priority.stepAsideWhileCommitting());
                    }
                    Runnable then = changes.apply(progress, p -> { });
                    inbox.done(q);
                    return then;
                });
            }
            // a command is recorded as done by a note in the outbox journal, written after the
            // effects it queued and made durable by the handler's sync of them (one fdatasync per
            // command, shared with other lanes), so the inbox's journal needs no sync per command
            Runnable after = changes.apply(progress, p -> {
                progressNoted.add(q.seq());
                outbox.note(PROGRESS + q.seq(), p);
            });
            outbox.sync();
            inbox.done(q);
            return after;
        } finally {
            if (gated) {
                priority.laneDone();
            }
        }
    }

    /**
     * Runs what a delivery leaves for after its changes are committed (routing new questions, the
     * monitor): the delivery is done with whatever happens here, so a failure is logged; the
     * monitor runs again at the next delivery.
     */
    private void afterCommit(InboundDelivery d, Runnable after) {
        try {
            after.run();
            outbox.sync();
        } catch (RuntimeException e) {
            LOG.warn("delivery {} ({}): its changes are committed, but what follows them failed: {}", d.id(),
                    d.event(), e.toString(), e);
        }
    }

    /** The lanes' tick: forget old ids once a day, take up lines whose retry is due, send due effects. */
    private void tick() {
        try {
            maintain();
            Instant now = clock.instant();
            adopt(now);
            for (Line line : lines.values()) {
                boolean start;
                synchronized (line) {
                    start = claimForLane(line, now);
                }
                if (start) {
                    dispatch(line);
                }
            }
            outbox.flush();
        } catch (RuntimeException e) {
            LOG.error("worker tick: {}", e.toString(), e);
        }
    }

    /** Takes up the deliveries of replicas that are gone (none on the file store). */
    private void adopt(Instant now) {
        if (closed) {
            return;
        }
        List<DeliveryQueue.Queued> left;
        try {
            left = inbox.adoptable(now);
        } catch (RuntimeException e) {
            LOG.warn("worker: cannot look for deliveries left by replicas that are gone: {}", e.toString());
            return;
        }
        int n = 0;
        for (DeliveryQueue.Queued q : left) {
            if (!tracked.contains(q.seq())) {
                n++;
                submit(q);
            }
        }
        if (n > 0) {
            // also this replica's own that no acknowledging thread handed over (an insert that committed
            // though its answer was lost); those being acknowledged now are not adoptable
            LOG.info("worker: taking up {} queued deliveries no lane here had (left by replicas that are gone, "
                    + "or queued here by an insert whose answer was lost)", n);
        }
    }

    private void maintain() {
        synchronized (maintenance) {
            try {
                forgetProgressOfDone();
            } catch (RuntimeException e) {
                // a failed sync of the inbox's journal forgets nothing: the notes wait for the next tick
                LOG.warn("worker: cannot record which deliveries are done (the inbox's journal, or the database); "
                        + "progress notes kept for the next tick: {}", e.toString());
            }
            try {
                inbox.tidy();
            } catch (RuntimeException e) {
                LOG.warn("worker: cannot tidy the delivery queue; at the next tick again: {}", e.toString());
            }
            if (clock.instant().isAfter(lastPrune.plus(Duration.ofDays(1)))) {
                inbox.prune();
                outbox.prune();
                try {
                    // the claims are every replica's: one at a time forgets the old ones, under a lease
                    // its holder renews at each daily run and another takes over once it lapses
                    Instant now = clock.instant();
                    if (replicas.lease(FORGET_CLAIMS, now, FORGET_CLAIMS_LEASE)) {
                        replicas.forgetClaims(now.minus(KEEP_CLAIMS));
                    }
                } catch (RuntimeException e) {
                    LOG.warn("worker: cannot forget old claims of effects; tomorrow again: {}",
                            e.toString());
                }
                lastPrune = clock.instant();
            }
        }
    }

    /**
     * Processes every due delivery on the caller's thread, line by line in the order their first
     * deliveries were received (lines a lane is working on are left to it), then sends every due
     * effect.
     */
    public void drain() {
        maintain();
        Instant now = clock.instant();
        adopt(now);
        List<Line> ordered = new ArrayList<>();
        for (Line line : lines.values()) {
            synchronized (line) {
                if (claim(line, now)) {
                    ordered.add(line);
                }
            }
        }
        ordered.sort(Comparator.comparingLong(Worker::firstSeq));
        for (Line line : ordered) {
            work(line, Integer.MAX_VALUE);
        }
        outbox.flush();
    }

    private static long firstSeq(Line line) {
        synchronized (line) {
            DeliveryQueue.Queued head = line.items.peek();
            return head == null ? Long.MAX_VALUE : head.seq();
        }
    }

    /** MDC keys every log line of a delivery's work carries (AGENTX_LOG_FORMAT=json writes them as fields). */
    public static final String MDC_DELIVERY = "delivery";
    public static final String MDC_REPOSITORY = "repository";
    public static final String MDC_ISSUE = "issue";

    /** The body as a JSON object, or null if it is not one (the server checked it; an old or hand-made file may not be). */
    private JsonNode parse(byte[] body) {
        try {
            JsonNode p = json.readTree(body);
            return p != null && p.isObject() ? p : null;
        } catch (IOException e) {
            return null;
        }
    }

    /** Puts the delivery id, repository and issue into the MDC; returns the payload's action. */
    private static String putContext(InboundDelivery d, JsonNode p) {
        MDC.put(MDC_DELIVERY, d.id());
        if (p == null) {
            return "";
        }
        String repo = p.path("repository").path("full_name").asText("");
        int issue = Payloads.issueNumber(p);
        if (!repo.isEmpty()) {
            MDC.put(MDC_REPOSITORY, repo);
        }
        if (issue > 0) {
            MDC.put(MDC_ISSUE, String.valueOf(issue));
        }
        return p.path("action").asText("");
    }

    private static void clearContext() {
        MDC.remove(MDC_DELIVERY);
        MDC.remove(MDC_REPOSITORY);
        MDC.remove(MDC_ISSUE);
    }

    /**
     * Stops: the lanes work off the deliveries already queued for up to {@link #DRAIN} (what is not
     * reached by then, or waits out a retry, stays in the inbox on disk for the next start), then
     * the outbox is flushed once.
     */
    @Override
    public void close() {
        ExecutorService ex;
        ExecutorService send;
        ScheduledExecutorService tick;
        ScheduledExecutorService timers;
        synchronized (this) {
            drainUntil = System.nanoTime() + DRAIN.toNanos();
            closed = true;
            ex = lanes;
            send = senders;
            tick = ticker;
            timers = outboxTimers;
            lanes = null;
            senders = null;
            ticker = null;
            outboxTimers = null;
        }
        if (ex == null) {
            syncDoneQuietly();
            return;
        }
        tick.shutdown();
        ex.shutdown();
        try {
            if (!ex.awaitTermination(30, TimeUnit.SECONDS)) {
                ex.shutdownNow();
            }
            send.shutdown(); // after the lanes: what they queued last is sent, or left to the final flush
            if (!send.awaitTermination(30, TimeUnit.SECONDS)) {
                send.shutdownNow();
            }
            tick.awaitTermination(30, TimeUnit.SECONDS);
            timers.shutdownNow(); // what it had scheduled is left to the final flush
            timers.awaitTermination(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            ex.shutdownNow();
            send.shutdownNow();
            timers.shutdownNow();
            Thread.currentThread().interrupt();
        }
        syncDoneQuietly();
        // Shutdown: what is still queued stays in the inbox and outbox on disk; send what is due once more.
        try {
            Outbox.Flush f = outbox.flush();
            LOG.info("worker stopped; final outbox flush: {} sent, {} failed, {} waiting", f.done(), f.failed(),
                    f.waiting());
        } catch (RuntimeException e) {
            LOG.warn("final outbox flush failed; the effects stay queued on disk: {}", e.toString());
        }
    }
}
