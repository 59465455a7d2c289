package dev.agentx.clarify.github.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.config.AgentxConfig;
import dev.agentx.clarify.config.Labels;
import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.github.gate.PullRequestGate;
import dev.agentx.clarify.github.notify.Notifier;
import dev.agentx.clarify.github.outbox.Effect;
import dev.agentx.clarify.github.outbox.Outbox;
import dev.agentx.clarify.protocol.Autonomy;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import dev.agentx.clarify.render.MarkdownRenderer;
import dev.agentx.clarify.store.Notes;
import dev.agentx.clarify.store.UnitOfWork;
import dev.agentx.clarify.store.copy.IssueStates;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Keeps an issue on GitHub in step with its ledger. The ledger is the source of truth: every
 * thread entry not yet posted is queued as a comment (rendered by {@link MarkdownRenderer}; of a
 * record asked in a pull request's review, a reply in that review thread), a
 * record the monitor marked stale gets its notice, and the status labels are set to what the
 * ledger says. What was queued is remembered as a note in
 * the outbox's journal ({@link Outbox#note(String, Object)}), written after the effects it
 * names and made durable by the same {@link Outbox#sync()}, so the state can never say "queued"
 * of effects a crash lost, and it costs no file and no fsync of its own. Running it again is
 * harmless: the outbox drops repeated effects by their keys. On PostgreSQL the state is a shared
 * note instead ({@link Notes}), locked, read and written again in the store's unit (the
 * delivery's transaction, or one of its own), which also claims the effects queued: replicas
 * on one database take turns on an issue and continue from what any of them queued.
 *
 * <p>{@code .agentx/state/github/issue-N.json}: a state written by {@code agentx sync --write}
 * ({@link #recordMirrored}). When it is there it is newer than the note (the server removes it,
 * durably, once a note has taken its place), so it is used.
 */
public final class IssueMirror {
    private static final int STRIPES = 64;
    /**
     * How long after the monitor marked a record stale its notice is queued by each sync of the
     * issue: the notice follows from the ledger as its thread's comments do, so one that a crash
     * kept from the outbox (the file store writes the mark and the notice one after the other)
     * is queued by the issue's next sync, at the latest the restart's catch-up. Well within what
     * the outbox and the replicas' claims remember of an effect's key (30 and 7 days), so a
     * record left stale longer (no delivery ran a pass that would escalate it) is not noticed twice.
     */
    static final Duration STALE_NOTICE_WINDOW = Duration.ofDays(1);
    private final Clock clock;
    private final Outbox outbox;
    private final Notes shared;
    private final UnitOfWork unit;
    private final Actors actors;
    private final MarkdownRenderer renderer = new MarkdownRenderer();
    private final Notifier notifier;
    /** The issue's state is keyed by record ids. */
    private final ObjectMapper json = JsonSupport.idKeyed();
    /** The merge gate, told of each issue whose clarifications changed; null: none. */
    private volatile PullRequestGate gate;
    /** One issue is brought in step by one thread at a time (a lane and another's monitor pass may meet). */
    private final Object[] stripes = new Object[STRIPES];

    /**
     * What was queued for one issue: thread entries per record, the labels set, and the
     * installation; on PostgreSQL also {@code last}, the effects the last unit that queued any for
     * the issue queued, and by which replica (null: none recorded).
     */
    record State(long installation, Map<String, Integer> posted, List<String> labels, int generation, Last last) {
        State {
            posted = new LinkedHashMap<>(posted == null ? Map.of() : posted);
            labels = List.copyOf(labels == null ? List.of() : labels);
        }

        State(long installation, Map<String, Integer> posted, List<String> labels, int generation) {
            this(installation, posted, labels, generation, null);
        }
    }

    /**
     * The key hashes of the effects one unit queued for an issue, and the replica that queued them:
     * another replica queuing the issue's next effects sends them only once these are done, so the
     * issue's comments and labels change on GitHub in the order they were queued whichever replica
     * queued them ({@link Outbox#after}).
     */
    record Last(String replica, List<String> effects) {
        Last {
            effects = List.copyOf(effects == null ? List.of() : effects);
        }
    }

    /** A state and whether it came from the state file (which goes once a note replaces it). */
    private record Loaded(State state, boolean fromFile) {
    }

    /** Each issue's state a note in the outbox's journal (the file store). */
    public IssueMirror(Outbox outbox, Actors actors, Clock clock) {
        this(outbox, actors, clock, null, UnitOfWork.NONE);
    }

    /**
     * {@code shared}: where replicas on one database keep each issue's state, so that each
     * continues from what any of them queued, in {@code unit}'s units.
     */
    public IssueMirror(Outbox outbox, Actors actors, Clock clock, Notes shared, UnitOfWork unit) {
        this(outbox, actors, clock, shared, unit, new Notifier("https://github.com"));
    }

    /**
     * {@code notifier}: the notifications ({@code [[notify]]}) of each change, queued with its
     * comment, linking to GitHub's web address it was made with.
     */
    public IssueMirror(Outbox outbox, Actors actors, Clock clock, Notes shared, UnitOfWork unit, Notifier notifier) {
        this.notifier = notifier;
        this.clock = clock;
        this.shared = shared;
        this.unit = unit;
        this.outbox = outbox;
        this.actors = actors;
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new Object();
        }
    }

    /** Tells {@code g} of each issue whose clarifications changed, in the same unit as the issue's sync. */
    public void gate(PullRequestGate g) {
        this.gate = g;
    }

    static Path stateFile(LocalMode repo, int issue) {
        return stateFileIn(repo.root(), issue);
    }

    /**
     * {@code .agentx/state/github/issue-N.json} under the repository root {@code root}: the state
     * {@code agentx sync --write} leaves on the file store, which the server prefers to its note.
     */
    private static Path stateFileIn(Path root, int issue) {
        return stateFolderIn(root).resolve("issue-" + issue + ".json");
    }

    /** {@code .agentx/state/github/} under the repository root {@code root}: where the state files are. */
    private static Path stateFolderIn(Path root) {
        return root.resolve(".agentx/state/github");
    }

    /**
     * What the keys of the effects the mirror queues for an issue start with: {@code <id>#<issue>/},
     * by the repository's id, so a renamed repository's keys go on and a new repository under a
     * reused name never meets the old one's.
     */
    public static String effectPrefix(RepoRef ref, int issue) {
        return ref.stateKey() + "#" + issue + "/";
    }

    /** The outbox note holding the issue's state. */
    static String noteName(RepoRef ref, int issue) {
        return Notes.issueNote(ref.stateKey(), issue);
    }

    /** The issue's state; {@code lock}: the shared note locked until the calling thread's unit ends. */
    private Optional<Loaded> load(LocalMode repo, RepoRef ref, int issue, boolean lock) {
        // on PostgreSQL the shared note, else this data dir's own: what a server moved from files
        // to PostgreSQL on its data dir had posted (docs/storage.md, moving a server)
        Optional<State> noted = shared != null
                ? (lock ? shared.lock(noteName(ref, issue), State.class) : shared.get(noteName(ref, issue), State.class))
                        .or(() -> outbox.note(noteName(ref, issue), State.class))
                : outbox.note(noteName(ref, issue), State.class);
        Path file = stateFile(repo, issue);
        if (!file.toFile().exists()) { // java.io: no exception thrown and caught on the common path
            return noted.map(s -> new Loaded(s, false));
        }
        State written;
        try {
            written = json.readValue(Files.readAllBytes(file), State.class);
        } catch (NoSuchFileException e) {
            return noted.map(s -> new Loaded(s, false)); // removed since the check
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
        return Optional.of(new Loaded(overNote(written, noted), true));
    }

    /**
     * The state {@code written} by {@code agentx sync --write}, which is newer than the issue's
     * note {@code noted}: the note's label generation when higher (label effects are keyed by
     * generation: never count from a lower one than was used), and the effects it says were
     * queued last.
     */
    private static State overNote(State written, Optional<State> noted) {
        int generation = Math.max(written.generation(), noted.map(State::generation).orElse(0));
        return new State(written.installation(), written.posted(), written.labels(), generation,
                noted.map(State::last).orElse(null));
    }

    private static final java.util.regex.Pattern STATE_FILE = java.util.regex.Pattern.compile(
            "issue-([1-9][0-9]{0,8})\\.json");

    /**
     * What each issue shows on GitHub as the data dir {@code dataDir} records it, for {@code agentx
     * store copy} to hand over: its outbox's note of the issue, or the state {@code agentx sync
     * --write} left beside the ledgers where there is one, which the server uses over the note
     * until it replaces it at the issue's next change. Read without changing the data dir.
     */
    public static IssueStates statesIn(Path dataDir) {
        Map<String, JsonNode> notes = Outbox.notesIn(dataDir.resolve("outbox"), Notes.ISSUE_NOTE_PREFIX);
        ObjectMapper json = JsonSupport.idKeyed();
        return repo -> {
            SortedMap<Integer, String> out = new TreeMap<>();
            notes.forEach((name, state) -> Notes.issueOf(repo, name).ifPresent(issue -> out.put(issue,
                    state.toString())));
            Path github = stateFolderIn(dataDir.resolve("repos").resolve(repo));
            if (!Files.isDirectory(github)) {
                return out;
            }
            try (java.util.stream.Stream<Path> files = Files.list(github)) {
                for (Path file : files.filter(Files::isRegularFile).sorted().toList()) {
                    java.util.regex.Matcher m = STATE_FILE.matcher(file.getFileName().toString());
                    if (!m.matches()) {
                        continue;
                    }
                    int issue = Integer.parseInt(m.group(1));
                    State written = json.readValue(Files.readAllBytes(file), State.class);
                    String note = out.get(issue);
                    Optional<State> noted = note == null ? Optional.empty() : Optional.of(json.readValue(note,
                            State.class));
                    out.put(issue, json.writeValueAsString(overNote(written, noted)));
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read the issue states in " + github + ": " + e.getMessage(), e);
            }
            return out;
        };
    }

    /** The installation that last acted on the issue, if any (for a restart's catch-up). */
    public Optional<Long> installationOf(LocalMode repo, RepoRef ref, int issue) {
        return load(repo, ref, issue, false).map(l -> l.state().installation());
    }

    /** Queues what the issue lacks on GitHub. */
    public void sync(LocalMode repo, RepoRef ref, int issue, long installation) {
        sync(repo, ref, issue, installation, () -> { });
    }

    /**
     * Queues what the issue lacks on GitHub, then runs {@code thenQueue}, which may queue effects
     * that are to follow those on GitHub (a command's reply), before all of them and the issue's
     * new state are made durable with one outbox sync. {@code thenQueue} also runs when the issue
     * has no ledger; not when something before it failed.
     */
    public void sync(LocalMode repo, RepoRef ref, int issue, long installation, Runnable thenQueue) {
        if (shared != null) {
            // the issue's note is locked until the unit ends: no lock of this process is held meanwhile,
            // so a unit waiting for it holds nothing this thread waits for
            unit.run(() -> {
                syncLocked(repo, ref, issue, installation, thenQueue);
                return null;
            });
            return;
        }
        synchronized (stripes[Math.floorMod(noteName(ref, issue).hashCode(), STRIPES)]) {
            syncLocked(repo, ref, issue, installation, thenQueue);
        }
    }

    private void syncLocked(LocalMode repo, RepoRef ref, int issue, long installation, Runnable thenQueue) {
        Optional<Ledger> read = repo.ledgers().read(issue);
        if (read.isEmpty()) {
            thenQueue.run();
            return;
        }
        Ledger ledger = read.get();
        Optional<Loaded> stored = load(repo, ref, issue, true);
        State state = stored.map(Loaded::state).orElse(new State(installation, Map.of(), List.of(), 0));
        if (shared != null && state.last() != null && !state.last().replica().equals(outbox.replica())) {
            // what another replica queued last for the issue goes out before anything queued now
            outbox.after(installation, ref, issue, state.last().effects());
        }
        Map<String, Integer> posted = new LinkedHashMap<>(state.posted());
        String prefix = effectPrefix(ref, issue);

        record Item(ClarificationRecord record, ThreadEntry entry, int index) {
        }
        List<Item> items = new ArrayList<>();
        for (ClarificationRecord r : ledger.clarifications()) {
            for (int i = posted.getOrDefault(r.id(), 0); i < r.thread().size(); i++) {
                items.add(new Item(r, r.thread().get(i), i));
            }
        }
        items.sort(Comparator.comparing((Item it) -> it.entry().timestamp()).thenComparing(it -> it.record().id())
                .thenComparingInt(Item::index));
        AgentxConfig config = repo.config();
        Actors roles = actors.with(config);
        for (Item it : items) {
            outbox.enqueue(posted(prefix + it.record().id() + "/" + it.index(), installation, ref, issue, it.record(),
                    comment(roles, it.record(), it.index(), config.wake().get(it.record().from()))));
            // in the same unit as the comment: both are committed with the change, or neither
            notifier.entry(config, ref, issue, installation, it.record(), it.index()).forEach(outbox::enqueue);
        }
        for (ClarificationRecord r : ledger.clarifications()) {
            posted.put(r.id(), r.thread().size());
        }

        List<String> desired = labels(ledger, repo.config().labels());
        Set<String> add = new LinkedHashSet<>(desired);
        add.removeAll(state.labels());
        Set<String> remove = new LinkedHashSet<>(state.labels());
        // GitHub compares label names without regard to case: a label renamed only in case stays
        remove.removeIf(l -> desired.stream().anyMatch(l::equalsIgnoreCase));
        int generation = state.generation();
        if (!add.isEmpty() || !remove.isEmpty()) {
            generation++;
            String labelKey = prefix + "labels/" + generation + "/";
            if (!add.isEmpty()) {
                outbox.enqueue(new Effect.AddLabels(labelKey + "add", installation, ref, issue, List.copyOf(add)));
            }
            for (String label : remove) {
                outbox.enqueue(new Effect.RemoveLabel(labelKey + "remove/" + label, installation, ref, issue, label));
            }
        }
        for (ClarificationRecord r : ledger.clarifications()) {
            staleNotice(roles, ref, issue, installation, r).ifPresent(notice -> {
                outbox.enqueue(notice);
                notifier.stale(config, ref, issue, installation, r).forEach(outbox::enqueue);
            });
        }
        thenQueue.run();
        if (gate != null && (!items.isEmpty() || generation != state.generation())) {
            // a clarification changed (every change adds a thread entry): the pull requests it gates are
            // evaluated again, their check runs queued and recorded in this unit, before this state's sync
            gate.issueChanged(repo, ref, issue, installation);
        }
        Last last = state.last();
        if (shared != null) {
            List<String> queued = outbox.queuedInUnit(installation, ref, issue);
            if (!queued.isEmpty()) {
                last = new Last(outbox.replica(), queued);
            }
        }
        State next = new State(installation, posted, desired, generation, last);
        if (!next.equals(state) || stored.isEmpty()) {
            Path written = stored.isPresent() && stored.get().fromFile() ? stateFile(repo, issue) : null;
            if (shared != null) {
                // in the unit: committed with the effects it speaks of and their claims
                shared.put(noteName(ref, issue), next);
                if (written != null) {
                    unit.join(new UnitOfWork.Participant() {
                        @Override
                        public void committed() {
                            removeDurably(written); // the note has taken its place; it must not come back
                        }
                    });
                }
            } else {
                outbox.note(noteName(ref, issue), next); // after the effects it speaks of
                outbox.sync();
                if (written != null) {
                    removeDurably(written); // the note has taken its place; it must not come back
                }
            }
        }
    }

    private static void removeDurably(Path file) {
        try {
            Files.deleteIfExists(file);
            AtomicFiles.fsyncDirectory(file.getParent());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove " + file + " (its state is in the outbox journal now): "
                    + e.getMessage(), e);
        }
    }

    /**
     * Records that everything in {@code ledger} is on GitHub already (its comments posted, its
     * labels set), so the server does not post it again: for {@code agentx sync --write}, which
     * rebuilt the ledger of the repository root {@code root} from the app's comments.
     */
    public static void recordMirrored(Path root, Ledger ledger, long installation, Labels names) {
        State state = new State(installation, postedCounts(ledger), labels(ledger, names), 0);
        try {
            AtomicFiles.write(stateFileIn(root, ledger.issueNumber()), JsonSupport.mapper().writeValueAsBytes(state));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Records that everything in {@code ledger} is on GitHub already, as {@link #recordMirrored(Path,
     * Ledger, long, Labels)} does, in the issue's shared note of {@code notes} (the server on
     * PostgreSQL): for {@code agentx sync --write}, inside the calling thread's unit, which writes
     * the rebuilt ledger of {@code repo} ({@code owner/name} as the store names it) in the same
     * commit. The note is locked first; its label generation (label effects are keyed by it) and
     * the effects another replica queued last are kept, so the server goes on from them.
     */
    public static void recordMirrored(Notes notes, String repo, Ledger ledger, long installation, Labels names) {
        String name = Notes.issueNote(repo, ledger.issueNumber());
        Optional<State> before = notes.lock(name, State.class);
        notes.put(name, new State(installation, postedCounts(ledger), labels(ledger, names),
                before.map(State::generation).orElse(0), before.map(State::last).orElse(null)));
    }

    /**
     * Removes the state file {@code agentx sync --write} leaves on the file store for {@code issue}
     * under the repository root {@code root}, if there is one: on PostgreSQL the issue's note holds
     * the state, and a file left in the data dir would outrank it ({@link #load}).
     */
    public static void removeStateFile(Path root, int issue) {
        Path file = stateFileIn(root, issue);
        try {
            if (Files.deleteIfExists(file)) {
                AtomicFiles.fsyncDirectory(file.getParent());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove " + file + ", which the server would prefer to the issue's "
                    + "state in the database: remove it by hand (" + e.getMessage() + ")", e);
        }
    }

    /** How many thread entries of each record of {@code ledger} there are: all of them, as posted. */
    private static Map<String, Integer> postedCounts(Ledger ledger) {
        Map<String, Integer> posted = new LinkedHashMap<>();
        ledger.clarifications().forEach(r -> posted.put(r.id(), r.thread().size()));
        return posted;
    }

    /**
     * A thread entry as a comment: questions mention the target role; escalations say who may
     * resolve; an entry that settles the requester's question ends with {@code wake}, the
     * requester role's {@code [wake]} mention (null: none), and what changed ({@link
     * dev.agentx.clarify.render.WakeLine}).
     */
    String comment(Actors actors, ClarificationRecord r, int index, String wake) {
        ThreadEntry e = r.thread().get(index);
        // Questions call on the target role; so do an agent's proposal (autonomy approve: a person of
        // the role accepts it) and answers under autonomy notify (they count, the role's people are told).
        boolean tell = e.type() == EntryType.QUESTION || e.isProposal()
                || (e.isAnswer() && e.acceptedBy() == null && r.effectiveAutonomy() == Autonomy.NOTIFY);
        List<String> mentions = tell ? actors.mentions(r.to()) : List.of();
        String body = renderer.entry(r, index, mentions, wake);
        if (e.type() == EntryType.ESCALATION) {
            int marker = body.lastIndexOf("<!-- agentx:");
            body = body.substring(0, marker) + "Who may resolve it: " + actors.maintainerPolicy() + ".\n\n"
                    + body.substring(marker);
        }
        return body;
    }

    /** The status labels the ledger calls for, by the names the repository's config gives them. */
    static List<String> labels(Ledger ledger, Labels names) {
        List<String> out = new ArrayList<>();
        List<ClarificationRecord> records = ledger.clarifications();
        if (records.stream().anyMatch(r -> r.status().awaitingAnswer())) {
            out.add(names.pending());
        }
        if (records.stream().anyMatch(r -> r.blocking()
                && (r.status().awaitingAnswer() || r.status() == Status.ESCALATED))) {
            out.add(names.blocked());
        }
        if (records.stream().anyMatch(r -> r.status() == Status.ESCALATED)) {
            out.add(names.escalated());
        }
        return out;
    }

    /**
     * The stale notice of a record the monitor marked stale, while the outbox surely remembers its
     * key ({@link #STALE_NOTICE_WINDOW} after the mark), so queuing it again is dropped as a repeat.
     */
    private Optional<Effect> staleNotice(Actors actors, RepoRef ref, int issue, long installation,
                                         ClarificationRecord r) {
        if (r.status() != Status.STALE || r.reaskedAt() == null
                || !clock.instant().isBefore(r.reaskedAt().plus(STALE_NOTICE_WINDOW))) {
            return Optional.empty();
        }
        return Optional.of(posted(effectPrefix(ref, issue) + r.id() + "/stale/" + r.round() + "/" + r.staleAfter(),
                installation, ref, issue, r, renderer.stale(r, actors.mentions(r.to()))));
    }

    /**
     * A comment about record {@code r}: a reply in the review thread the record was asked in, or
     * for a record asked on no review comment an issue comment.
     */
    static Effect posted(String key, long installation, RepoRef ref, int issue, ClarificationRecord r, String body) {
        Long thread = r.codeLine() == null ? null : r.codeLine().reviewComment();
        return thread != null ? new Effect.ReviewReply(key, installation, ref, issue, thread, body)
                : new Effect.Comment(key, installation, ref, issue, body);
    }
}
