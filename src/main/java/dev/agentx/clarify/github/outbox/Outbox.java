package dev.agentx.clarify.github.outbox;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.github.Stamps;
import dev.agentx.clarify.github.api.GitHubApiException;
import dev.agentx.clarify.github.api.GitHubGateway;
import dev.agentx.clarify.metrics.Metrics;
import dev.agentx.clarify.metrics.ServerMetrics;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * The durable queue of effects on GitHub. An effect is written to disk (temp file, fsync, atomic
 * rename) before any network call, and its file is removed only once GitHub confirmed it, so a
 * crash or an outage loses nothing. Effects go out in the order they were queued; one that fails
 * holds back the later effects of its issue (so a question never appears after its answer).
 *
 * <p>Retries: server errors and lost connections back off exponentially (10 s doubling, at most
 * 10 min, or GitHub's Retry-After); rate limits (429, secondary limits, an exhausted primary
 * limit) wait what GitHub says and hold back the whole installation. Other 4xx answers are final:
 * the effect moves to {@code failed/} with the reason.
 *
 * <p>Exactly once: each effect's key is remembered in {@code done/} for {@link #KEEP_DONE}. A
 * comment whose earlier attempt may have reached GitHub (a 5xx or no response) carries a hidden
 * {@code <!-- agentx-effect:... -->} tag; before posting it again the outbox looks for that tag.
 */
public final class Outbox {
    private static final Logger LOG = LoggerFactory.getLogger(Outbox.class);
    static final Duration KEEP_DONE = Duration.ofDays(30);
    static final Duration FIRST_BACKOFF = Duration.ofSeconds(10);
    static final Duration MAX_BACKOFF = Duration.ofMinutes(10);
    static final int MAX_ATTEMPTS = 40;

    private final Path pending;
    private final Path done;
    private final Path failed;
    private final GitHubGateway github;
    private final Clock clock;
    private final Metrics metrics;
    private final ObjectMapper json = JsonSupport.mapper();
    private final Set<String> known = new HashSet<>();
    private long seq;

    /** What is kept on disk for one queued effect. */
    /** {@code delivery}: the id of the delivery whose handling queued it (null if none), for log lines. */
    record Entry(Effect effect, Instant queuedAt, int attempts, Instant notBefore, boolean uncertain,
                 String lastError, String delivery) {
        Entry retried(int attempts, Instant notBefore, boolean uncertain, String lastError) {
            return new Entry(effect, queuedAt, attempts, notBefore, uncertain, lastError, delivery);
        }
    }

    /** The result of one flush. */
    public record Flush(int done, int failed, int waiting) {
    }

    public Outbox(Path dir, GitHubGateway github, Clock clock, Metrics metrics) {
        this.metrics = metrics;
        this.pending = dir.resolve("pending");
        this.done = dir.resolve("done");
        this.failed = dir.resolve("failed");
        this.github = github;
        this.clock = clock;
        try {
            Files.createDirectories(pending);
            Files.createDirectories(done);
            Files.createDirectories(failed);
            for (Path p : list(pending)) {
                String name = p.getFileName().toString();
                seq = Math.max(seq, Long.parseLong(name.substring(0, name.indexOf('-'))));
                known.add(hashOf(p));
            }
            for (Path p : list(done)) {
                known.add(p.getFileName().toString());
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the outbox in " + dir + ": " + e.getMessage(), e);
        }
    }

    private static List<Path> list(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().matches("\\d+-[0-9a-f]+\\.json|[0-9a-f]{32}"))
                    .sorted().toList();
        }
    }

    private static String hashOf(Path pendingFile) {
        String name = pendingFile.getFileName().toString();
        return name.substring(name.indexOf('-') + 1, name.length() - ".json".length());
    }

    static String hash(String key) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The hidden tag a comment carries so a repeated attempt can tell whether the first one landed. */
    static String tag(Effect e) {
        return "<!-- agentx-effect:" + hash(e.key()) + " -->";
    }

    /** Queues the effect durably; false when its key was queued or done before. */
    public synchronized boolean enqueue(Effect effect) {
        String h = hash(effect.key());
        if (known.contains(h)) {
            return false;
        }
        seq++;
        Path file = pending.resolve(String.format("%020d-%s.json", seq, h));
        write(file, new Entry(effect, clock.instant(), 0, null, false, null, MDC.get("delivery")));
        known.add(h);
        return true;
    }

    public synchronized int size() {
        try {
            return list(pending).size();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Sends every effect that is due, in order. Never throws for a GitHub failure. */
    public synchronized Flush flush() {
        int ok = 0;
        int bad = 0;
        int waiting = 0;
        Set<String> heldIssues = new HashSet<>();
        Set<Long> heldInstallations = new HashSet<>();
        List<Path> files;
        try {
            files = list(pending);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Instant now = clock.instant();
        for (Path file : files) {
            Entry entry = read(file);
            Effect e = entry.effect();
            String issue = e.installation() + "/" + e.repo() + "#" + e.issue();
            if (heldIssues.contains(issue) || heldInstallations.contains(e.installation())
                    || (entry.notBefore() != null && now.isBefore(entry.notBefore()))) {
                heldIssues.add(issue);
                waiting++;
                continue;
            }
            putContext(entry);
            String type = e.getClass().getSimpleName().toLowerCase(Locale.ROOT);
            try {
                perform(entry);
                markDone(file);
                metrics.increment(ServerMetrics.OUTBOX_EFFECTS, "type", type, "outcome", "done");
                ok++;
            } catch (GitHubApiException ex) {
                int attempts = entry.attempts() + 1;
                if (!ex.retryable() || attempts >= MAX_ATTEMPTS) {
                    LOG.error("outbox: giving up on {} after {} attempt(s): {}", e.key(), attempts, ex.getMessage());
                    moveToFailed(file, entry.retried(attempts, null, entry.uncertain(), ex.getMessage()));
                    metrics.increment(ServerMetrics.OUTBOX_EFFECTS, "type", type, "outcome", "failed");
                    bad++;
                    continue;
                }
                metrics.increment(ServerMetrics.OUTBOX_EFFECTS, "type", type, "outcome", "retry");
                Duration wait = ex.retryAfter() != null ? ex.retryAfter() : backoff(attempts);
                LOG.warn("outbox: {} failed (attempt {}), retrying in {} s: {}", e.key(), attempts, wait.toSeconds(),
                        ex.getMessage());
                write(file, entry.retried(attempts, now.plus(wait), entry.uncertain() || ex.uncertain(), ex.getMessage()));
                heldIssues.add(issue);
                if (ex.rateLimited()) {
                    heldInstallations.add(e.installation());
                }
                waiting++;
            } catch (RuntimeException ex) {
                LOG.error("outbox: dropping {}: {}", e.key(), ex.toString(), ex);
                moveToFailed(file, entry.retried(entry.attempts() + 1, null, entry.uncertain(), ex.toString()));
                metrics.increment(ServerMetrics.OUTBOX_EFFECTS, "type", type, "outcome", "failed");
                bad++;
            } finally {
                clearContext();
            }
        }
        return new Flush(ok, bad, waiting);
    }

    /** Log lines about an effect carry the delivery that queued it, its repository and issue, as the worker's do. */
    private static void putContext(Entry entry) {
        Effect e = entry.effect();
        if (entry.delivery() != null) {
            MDC.put("delivery", entry.delivery());
        }
        MDC.put("repository", e.repo().fullName());
        MDC.put("issue", String.valueOf(e.issue()));
        MDC.put("effect", e.key());
    }

    private static void clearContext() {
        MDC.remove("delivery");
        MDC.remove("repository");
        MDC.remove("issue");
        MDC.remove("effect");
    }

    static Duration backoff(int attempts) {
        Duration d = FIRST_BACKOFF.multipliedBy(1L << Math.min(attempts - 1, 16));
        return d.compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : d;
    }

    private void perform(Entry entry) {
        Effect effect = entry.effect();
        if (effect instanceof Effect.Comment c) {
            String tag = tag(c);
            if (entry.uncertain() && github.commentContains(c.installation(), c.repo(), c.issue(), tag,
                    entry.queuedAt().minus(Duration.ofMinutes(1)))) {
                LOG.info("outbox: {} was posted by an earlier attempt; not posting it again", c.key());
                return;
            }
            github.createComment(c.installation(), c.repo(), c.issue(), tag + "\n" + c.body());
        } else if (effect instanceof Effect.Reaction r) {
            if (r.commentId() == null) {
                github.reactToIssue(r.installation(), r.repo(), r.issue(), r.content());
            } else {
                github.reactToComment(r.installation(), r.repo(), r.issue(), r.commentId(), r.content());
            }
        } else if (effect instanceof Effect.AddLabels a) {
            github.addLabels(a.installation(), a.repo(), a.issue(), a.labels());
        } else if (effect instanceof Effect.RemoveLabel r) {
            github.removeLabel(r.installation(), r.repo(), r.issue(), r.label());
        }
    }

    private void markDone(Path file) {
        Path marker = done.resolve(hashOf(file));
        Stamps.write(marker, clock.instant());
        try {
            Files.delete(file);
            AtomicFiles.fsyncDirectory(pending);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot record " + file + " as done: " + e.getMessage(), e);
        }
    }

    private void moveToFailed(Path file, Entry entry) {
        write(failed.resolve(file.getFileName()), entry);
        try {
            Files.delete(file);
            AtomicFiles.fsyncDirectory(pending);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Forgets done keys older than {@link #KEEP_DONE}. */
    public synchronized void prune() {
        try {
            Stamps.prune(done, name -> name.matches("[0-9a-f]{32}"), clock.instant().minus(KEEP_DONE), known::remove);
        } catch (UncheckedIOException e) {
            LOG.warn("outbox: {}", e.getMessage());
        }
    }

    private void write(Path file, Entry entry) {
        try {
            AtomicFiles.write(file, json.writeValueAsBytes(entry));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private Entry read(Path file) {
        try {
            return json.readValue(file.toFile(), Entry.class);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read outbox entry " + file + ": " + e.getMessage(), e);
        }
    }

}
