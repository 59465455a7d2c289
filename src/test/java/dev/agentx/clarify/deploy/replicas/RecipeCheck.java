package dev.agentx.clarify.deploy.replicas;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPairGenerator;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.regex.Pattern;

/**
 * What both recipes' checks share: a run of deliveries at 20 a second through the recipe's
 * webhook while something is done to it (a {@link Disruption}), the deliveries a replica did not
 * acknowledge sent again as GitHub's redelivery would, every one sent again at the end (each must
 * be answered as a duplicate), the questions posted on the {@link FakeGitHub} (each exactly once),
 * and the verdict. A recipe's check says how it starts, disrupts and removes what it runs.
 */
abstract class RecipeCheck {
    /** Names this run's deliveries and repository, so a second run on one database starts afresh. */
    final String run = String.format("%08x", java.util.concurrent.ThreadLocalRandom.current().nextInt());
    final String repo = "acme/check-" + run;
    final Path work;
    final FakeGitHub github = new FakeGitHub(repo);
    final Webhook webhook = new Webhook(repo);
    final List<String> problems = new ArrayList<>();
    final Map<Integer, String> sent = new TreeMap<>(); // issue -> delivery id
    final Map<Integer, Integer> lastStatus = new ConcurrentHashMap<>();

    RecipeCheck() throws IOException {
        this.work = Files.createTempDirectory("agentx-replicas-check");
    }

    /** Brings the recipe up, runs its phases and gives the verdict: 0 when every check passed, else 1. */
    abstract int run() throws Exception;

    /** Removes what {@link #run} started, or with {@code keep} says how to remove it later. */
    abstract void cleanUp(boolean keep);

    /** A throwaway App key and an agentx.toml with two roles, in {@code dir}. */
    void writeAppFiles(Path dir) throws Exception {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("agentx.toml"), String.join("\n",
                "[roles]", "architect = [\"arch\"]", "engineer = [\"eng\"]", ""));
        KeyPairGenerator rsa = KeyPairGenerator.getInstance("RSA");
        rsa.initialize(2048);
        String pem = "-----BEGIN PRIVATE KEY-----\n"
                + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                        .encodeToString(rsa.generateKeyPair().getPrivate().getEncoded())
                + "\n-----END PRIVATE KEY-----\n";
        Path key = dir.resolve("app.pem");
        Files.writeString(key, pem);
        // a throwaway key, readable by the image's user (uid 10001) whoever runs the check
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-r--r--"));
    }

    /** What is done to the recipe {@code afterMillis} into a burst of deliveries. */
    record Disruption(long afterMillis, Runnable action) {}

    /** {@code count} questions on issues {@code first}.., one per issue, paced at 20/s. */
    Map<String, Integer> burst(int first, int count, Disruption disruption) throws Exception {
        Thread disrupt = null;
        if (disruption != null) {
            disrupt = new Thread(() -> {
                sleep(disruption.afterMillis());
                disruption.action().run();
            });
            disrupt.start();
        }
        Map<String, Integer> answers = new ConcurrentHashMap<>();
        long start = System.nanoTime();
        var pool = Executors.newFixedThreadPool(16);
        try {
            List<java.util.concurrent.Future<?>> pending = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                int issue = first + i;
                String id = "check-" + run + "-" + issue;
                sent.put(issue, id);
                long due = start + i * 50_000_000L;
                long wait = due - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                }
                pending.add(pool.submit(() -> {
                    int status = webhook.deliver(id, issue);
                    answers.merge(String.valueOf(status), 1, Integer::sum);
                    lastStatus.put(issue, status);
                    return null;
                }));
            }
            for (var f : pending) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
        if (disrupt != null) {
            disrupt.join();
        }
        return new TreeMap<>(answers);
    }

    /**
     * What was answered in a phase. 202 is acknowledged, and so is 200: a copy passed on after
     * the first replica took it and went away before answering. Anything else GitHub records as
     * failed and sends again (the recovery pass): so does the check, until each is acknowledged.
     * A replica going away may cost a delivery that; an acknowledged one is never lost.
     */
    void refusedAndRedelivered(String phase, Map<String, Integer> answers, int first, int count) {
        List<Integer> refused = new ArrayList<>();
        for (int issue = first; issue < first + count; issue++) {
            int status = lastStatus.getOrDefault(issue, -1);
            if (status != 202 && status != 200) {
                refused.add(issue);
            }
        }
        System.out.printf("  answered %s; %d not acknowledged, sent again as GitHub's redelivery would%n",
                answers, refused.size());
        List<Integer> left = new ArrayList<>(refused);
        Instant giveUp = Instant.now().plusSeconds(120);
        while (!left.isEmpty() && Instant.now().isBefore(giveUp)) {
            left.removeIf(issue -> {
                int status = webhook.deliver(sent.get(issue), issue);
                return status == 202 || status == 200;
            });
            if (!left.isEmpty()) {
                sleep(2_000);
            }
        }
        if (!left.isEmpty()) {
            problems.add(phase + ": " + left.size()
                    + " deliveries still not acknowledged after 2 minutes of redelivery");
        }
    }

    void expectAllAcknowledged(String phase, Map<String, Integer> answers) {
        System.out.printf("  answered %s%n", answers);
        if (!answers.keySet().equals(java.util.Set.of("202"))) {
            problems.add(phase + ": expected every delivery acknowledged (202), got " + answers);
        }
    }

    /** Every delivery sent again: each must be answered as a duplicate. */
    void redeliverAll() {
        step("every delivery sent again: each answered as a duplicate");
        Map<String, Integer> again = new TreeMap<>();
        for (Map.Entry<Integer, String> e : sent.entrySet()) {
            again.merge(String.valueOf(webhook.deliver(e.getValue(), e.getKey())), 1, Integer::sum);
        }
        System.out.printf("  answered %s%n", again);
        if (!again.keySet().equals(java.util.Set.of("200"))) {
            problems.add("redelivery: expected only 200 (duplicate), got " + again);
        }
    }

    /**
     * Waits for a comment on every issue asked on, then a little longer for any second one. A
     * delivery whose processing failed while the database was away is tried again after 10 s,
     * 20 s, 40 s and so on: five minutes covers the outage's retries.
     */
    void settleComments() {
        step("comments on the fake GitHub: one per question, none twice");
        Instant start = Instant.now();
        Instant giveUp = start.plusSeconds(300);
        while (Instant.now().isBefore(giveUp) && github.commentedIssues() < sent.size()) {
            sleep(1_000);
        }
        System.out.printf("  waited %d s for the last question to be posted%n",
                Duration.between(start, Instant.now()).toSeconds());
        sleep(5_000);
        int missing = 0;
        int doubled = 0;
        List<Integer> missingIssues = new ArrayList<>();
        for (int issue : sent.keySet()) {
            long n = github.questionComments(issue);
            if (n == 0) {
                missing++;
                missingIssues.add(issue);
            } else if (n > 1) {
                doubled++;
                problems.add("issue " + issue + ": the question was posted " + n + " times");
            }
        }
        System.out.printf("  %d questions, %d comments posted in all; missing on %d issues, posted twice on %d%n",
                sent.size(), github.posted.size(), missing, doubled);
        if (missing > 0) {
            problems.add(missing + " acknowledged questions were not posted within 5 minutes, on issues "
                    + missingIssues);
        }
        if (!github.unknown.isEmpty()) {
            System.out.println("  the fake GitHub had no answer for: " + github.unknown);
        }
    }

    /** Each replica's log shows it acknowledged some of this run's questions. */
    void expectSpread(String one, String logOfOne, String other, String logOfOther) {
        String queued = "delivery check-" + run + "-\\d+ \\(issue_comment\\) queued";
        long byOne = count(logOfOne, queued);
        long byOther = count(logOfOther, queued);
        System.out.printf("  acknowledged by %s: %d, by %s: %d%n", one, byOne, other, byOther);
        if (byOne == 0 || byOther == 0) {
            problems.add("spread: one replica received no delivery (" + byOne + " / " + byOther + ")");
        }
    }

    int verdict(String ok) {
        if (problems.isEmpty()) {
            System.out.println("\nOK: " + ok);
            return 0;
        }
        System.out.println("\nFAILED:");
        problems.forEach(p -> System.out.println("  - " + p));
        return 1;
    }

    /** How many times {@code regex} matches in {@code text}. */
    static long count(String text, String regex) {
        return Pattern.compile(regex).matcher(text).results().count();
    }

    /** Prints the title of the next step. */
    static void step(String title) {
        System.out.println("\n== " + title);
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
