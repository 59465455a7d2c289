package dev.agentx.clarify.github.gate;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.gate.MergeGate;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.github.outbox.Effect;
import dev.agentx.clarify.github.outbox.Outbox;
import dev.agentx.clarify.store.Notes;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * The merge gate's state and its check runs: for each pull request, whether it is open, its head
 * commit, the issues it closes and the last evaluation queued; for each issue, the open pull
 * requests it gates (the index a clarification's change is looked up in, so no pull request is
 * scanned that the change does not concern). Each evaluation is {@link MergeGate}'s verdict
 * queued as an {@link Effect.CheckRun} in the outbox, with the state that says it was queued
 * written after it: on files as notes in the outbox's journal made durable by the same sync, on
 * PostgreSQL as shared notes in the same transaction as the change and the effect's claim. So a
 * crash either keeps both or neither, and the issue's next sync (at the latest the restart's
 * catch-up) evaluates again. An evaluation is queued only when the verdict or the head commit
 * changed, or a run was re-requested; evaluations of one pull request are numbered, and the check
 * run keeps the newest.
 *
 * <p>Locks, on PostgreSQL: the notes of the gated issues first (by number), then those of the
 * pull requests (by number), so units that meet on them take turns and never wait on each other in
 * a circle. On files one server works alone: one lock per repository stripe.
 */
public final class PullRequestGate {
    private static final int STRIPES = 64;
    private final Outbox outbox;
    /** Shared by replicas on PostgreSQL; null on files (the outbox's notes). */
    private final Notes shared;
    private final Object[] stripes = new Object[STRIPES];

    /**
     * A pull request as the gate knows it. {@code closes}: the issues its body closes (its own
     * number left out); {@code sequence}: the number of its last evaluation; {@code lastHead} and
     * {@code lastDigest}: the commit and verdict that evaluation was for; {@code htmlUrl}: the
     * repository's web address, for links; {@code last}: on PostgreSQL the effects the last unit
     * queued for it and by which replica (the next waits for them on another replica).
     */
    public record Pull(boolean open, String head, List<Integer> closes, long sequence, String lastHead,
                       String lastDigest, String htmlUrl, Last last) {
        public Pull {
            closes = List.copyOf(closes == null ? List.of() : closes);
        }
    }

    /** The key hashes of the effects one unit queued for a pull request, and the replica that queued them. */
    public record Last(String replica, List<String> effects) {
        public Last {
            effects = List.copyOf(effects == null ? List.of() : effects);
        }
    }

    /** The open pull requests an issue gates (its own number among them when it is one). */
    public record Gated(List<Integer> pulls) {
        public Gated {
            pulls = List.copyOf(pulls == null ? List.of() : pulls);
        }
    }

    /** On files: the state as notes in {@code outbox}'s journal. */
    public PullRequestGate(Outbox outbox) {
        this(outbox, null);
    }

    /** {@code shared}: the notes replicas on one database share (null: the outbox's own, on files). */
    public PullRequestGate(Outbox outbox, Notes shared) {
        this.outbox = outbox;
        this.shared = shared;
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new Object();
        }
    }

    static String pullNote(RepoRef ref, int pull) {
        return PULL_NOTES + ref.stateKey() + "#" + pull;
    }

    static String gatedNote(RepoRef ref, int issue) {
        return GATED_NOTES + ref.stateKey() + "#" + issue;
    }

    private static final String PULL_NOTES = "gate/";
    private static final String GATED_NOTES = "gated-by/";

    /**
     * What the names of the gate's notes of the repository whose state key is {@code key} begin
     * with: the record {@code agentx store copy} carries with the repository.
     */
    public static List<String> notePrefixes(String key) {
        return List.of(PULL_NOTES + key + "#", GATED_NOTES + key + "#");
    }

    /** What a {@code pull_request} event says of a pull request now. */
    public record PullEvent(int pull, boolean open, String head, SortedSet<Integer> closes, String htmlUrl) {
    }

    /**
     * Records what a {@code pull_request} event says of the pull request (open or closed, its head,
     * the issues its body closes), keeps the index of gated issues in step, and evaluates an open
     * one: a new head gets its own run. Inside the delivery's unit.
     */
    public void pullRequest(LocalMode repo, RepoRef ref, long installation, PullEvent e) {
        locked(ref, () -> {
            Optional<Pull> before = get(pullNote(ref, e.pull()), Pull.class);
            SortedSet<Integer> touched = new TreeSet<>(e.closes());
            touched.add(e.pull());
            before.ifPresent(p -> touched.addAll(p.closes()));
            for (int issue : touched) {
                Gated g = lock(gatedNote(ref, issue), Gated.class).orElse(new Gated(List.of()));
                boolean gates = e.open() && (issue == e.pull() || e.closes().contains(issue));
                SortedSet<Integer> pulls = new TreeSet<>(g.pulls());
                boolean changed = gates ? pulls.add(e.pull()) : pulls.remove(e.pull());
                if (changed) {
                    put(gatedNote(ref, issue), new Gated(List.copyOf(pulls)));
                }
            }
            Pull p = lock(pullNote(ref, e.pull()), Pull.class).orElse(new Pull(false, null, List.of(), 0, null, null,
                    e.htmlUrl(), null));
            Pull now = new Pull(e.open(), e.head(), List.copyOf(e.closes()), p.sequence(), p.lastHead(),
                    p.lastDigest(), e.htmlUrl(), p.last());
            if (now.open()) {
                now = evaluate(repo, ref, installation, e.pull(), now, false);
            }
            if (!now.equals(p)) {
                put(pullNote(ref, e.pull()), now);
            }
            outbox.sync();
            return null;
        });
    }

    /**
     * A re-requested run ({@code check_run.rerequested}) of pull request {@code pull} on {@code
     * head}: evaluated afresh, and the run updated even when the verdict is the same. False when
     * the gate knows no open pull request {@code pull} with that head.
     */
    public boolean rerequested(LocalMode repo, RepoRef ref, long installation, int pull, String head) {
        return locked(ref, () -> {
            Optional<Pull> p = lock(pullNote(ref, pull), Pull.class);
            if (p.isEmpty() || !p.get().open() || !head.equals(p.get().head())) {
                return false;
            }
            Pull now = evaluate(repo, ref, installation, pull, p.get(), true);
            put(pullNote(ref, pull), now);
            outbox.sync();
            return true;
        });
    }

    /**
     * A clarification of {@code issue} changed: each open pull request it gates is evaluated again,
     * inside the caller's unit (the issue mirror's sync, which queued the change's comments).
     */
    public void issueChanged(LocalMode repo, RepoRef ref, int issue, long installation) {
        locked(ref, () -> {
            List<Integer> pulls = lock(gatedNote(ref, issue), Gated.class).map(Gated::pulls).orElse(List.of());
            for (int pull : new TreeSet<>(pulls)) {
                Optional<Pull> p = lock(pullNote(ref, pull), Pull.class);
                if (p.isEmpty() || !p.get().open()) {
                    continue;
                }
                Pull now = evaluate(repo, ref, installation, pull, p.get(), false);
                if (!now.equals(p.get())) {
                    put(pullNote(ref, pull), now);
                }
            }
            return null;
        });
    }

    /** The pull request as the gate last recorded it, if it knows it. */
    public Optional<Pull> pull(RepoRef ref, int pull) {
        return get(pullNote(ref, pull), Pull.class);
    }

    /**
     * The verdict on {@code p} now, queued as the next evaluation when it differs from the last one
     * (or its head does, or {@code force}); returns the state to record.
     */
    private Pull evaluate(LocalMode repo, RepoRef ref, long installation, int pull, Pull p, boolean force) {
        MergeGate.Verdict v = MergeGate.evaluate(pull, new TreeSet<>(p.closes()), n -> repo.ledgers().read(n),
                p.htmlUrl());
        String digest = digest(v);
        if (!force && p.head().equals(p.lastHead()) && digest.equals(p.lastDigest())) {
            return p;
        }
        long seq = p.sequence() + 1;
        if (shared != null && p.last() != null && !p.last().replica().equals(outbox.replica())) {
            // the evaluation another replica queued before goes out first
            outbox.after(installation, ref, pull, p.last().effects());
        }
        outbox.enqueue(new Effect.CheckRun(ref.stateKey() + "#" + pull + "/gate/" + seq, installation, ref, pull,
                p.head(), seq, v.conclusion().wire(), v.title(), v.summary(), v.detailsUrl()));
        Last last = p.last();
        if (shared != null) {
            List<String> queued = new ArrayList<>(outbox.queuedInUnit(installation, ref, pull));
            if (!queued.isEmpty()) {
                last = new Last(outbox.replica(), queued);
            }
        }
        return new Pull(p.open(), p.head(), p.closes(), seq, p.head(), digest, p.htmlUrl(), last);
    }

    private static String digest(MergeGate.Verdict v) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest((v.conclusion().wire() + "\n" + v.title() + "\n"
                    + v.detailsUrl() + "\n" + v.summary()).getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(h, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Runs {@code work} under the repository's stripe on files. On PostgreSQL the notes' locks,
     * held by the unit, are the only ones: a lock of this process held while waiting for one of
     * the database could close a circle the database cannot see.
     */
    private <T> T locked(RepoRef ref, java.util.function.Supplier<T> work) {
        if (shared != null) {
            return work.get();
        }
        synchronized (stripes[Math.floorMod(ref.stateKey().hashCode(), STRIPES)]) {
            return work.get();
        }
    }

    private <T> Optional<T> get(String name, Class<T> type) {
        return shared != null ? shared.get(name, type) : outbox.note(name, type);
    }

    /** On PostgreSQL the note locked until the unit ends; on files the stripe's lock holds it. */
    private <T> Optional<T> lock(String name, Class<T> type) {
        return shared != null ? shared.lock(name, type) : outbox.note(name, type);
    }

    /** On files after the effects this thread queued, made durable with them by the next sync. */
    private void put(String name, Object value) {
        if (shared != null) {
            shared.put(name, value);
        } else {
            outbox.note(name, value);
        }
    }
}
