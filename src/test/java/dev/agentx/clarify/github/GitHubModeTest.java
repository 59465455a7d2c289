package dev.agentx.clarify.github;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.github.support.GitHubRig;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.support.MutableClock;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** End to end: webhooks in, ledger written, comments, reactions and labels out through WireMock. */
class GitHubModeTest {
    @TempDir
    Path dir;
    MutableClock clock;
    GitHubRig rig;

    @BeforeEach
    void setUp() {
        clock = MutableClock.at("2026-02-26T10:00:00Z");
        rig = configure(new GitHubRig(dir.resolve("data"), clock));
        rig.start();
    }

    /** The rig as each test runs it; a subclass runs the same tests over another store. */
    GitHubRig configure(GitHubRig rig) {
        return rig;
    }

    @AfterEach
    void tearDown() {
        rig.close();
    }

    private void accepted(GitHubRig.Response r) {
        assertEquals(202, r.status(), r.body());
        // where the acknowledgement's time went: the inbox's append and fdatasync within the handler's
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(
                "queue;dur=(\\d+\\.\\d{3});desc=\"durable queueing\", handler;dur=(\\d+\\.\\d{3})")
                .matcher(String.valueOf(r.serverTiming()));
        assertTrue(m.matches(), "Server-Timing: " + r.serverTiming());
        assertTrue(Double.parseDouble(m.group(1)) <= Double.parseDouble(m.group(2)), r.serverTiming());
    }

    private ClarificationRecord record(int issue, int index) {
        return rig.ledger(issue).clarifications().get(index);
    }

    /** The ports read as bound also once the server stops (agentx serve prints them after start, maybe while stopping). */
    @Test
    void thePortsStayThoseBoundWhileTheServerStops() {
        int port = rig.mode().port();
        int management = rig.mode().managementPort();
        assertTrue(port > 0 && management > 0, port + " " + management);
        rig.mode().close();
        assertEquals(port, rig.mode().port());
        assertEquals(management, rig.mode().managementPort());
    }

    @Test
    void aCommandsQuestionLabelsAndReactionAreMadeDurableByOneOutboxSync() {
        long before = rig.mode().outboxSyncs();
        accepted(rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which database?")));
        assertEquals(1, rig.comments(1).size());
        assertEquals(1, rig.requests("POST", GitHubRig.API_REPO + "/issues/1/labels").size());
        assertEquals(List.of("{\"content\":\"+1\"}"), rig.reactions());
        // one when the handler queued them (before the inbox records the command as done), one when
        // the worker's flush recorded the three as sent
        assertEquals(2, rig.mode().outboxSyncs() - before);
    }

    @Test
    void askPostsTheQuestionReactsAndLabels() {
        accepted(rig.deliver("issue_comment", rig.comment("eng", 1,
                "Thanks!\n/clarify @architect --topic \"Storage\" Which database\nshould we use?")));
        ClarificationRecord r = record(1, 0);
        assertEquals("CLR-1-001", r.id());
        assertEquals("engineer", r.from());
        assertEquals("architect", r.to());
        assertEquals("Storage", r.topic());
        assertEquals("Which database\nshould we use?", r.thread().get(0).body());
        assertEquals(Status.PENDING, r.status());

        List<String> comments = rig.comments(1);
        assertEquals(1, comments.size(), comments.toString());
        String q = comments.get(0);
        assertTrue(q.contains("**Clarification CLR-1-001** - round 1 of 5"), q);
        assertTrue(q.contains("@arch @acme/architects - your answer is requested."), q);
        assertTrue(q.contains("\n<!-- agentx:{\"id\":\"CLR-1-001\",\"round\":1,\"kind\":\"question\",\"v\":1,"), q);
        assertTrue(q.strip().endsWith("} -->"), q);
        assertEquals(List.of("{\"content\":\"+1\"}"), rig.reactions());
        assertEquals(1, rig.requests("POST", GitHubRig.API_REPO + "/issues/1/labels").size());
        String labels = rig.requests("POST", GitHubRig.API_REPO + "/issues/1/labels").get(0).getBodyAsString();
        assertTrue(labels.contains("clarification:pending") && labels.contains("blocked:clarification"), labels);
        assertEquals(0, rig.mode().pendingEffects());
        assertEquals(0, rig.mode().pendingDeliveries());
    }

    @Test
    void theRateLimitGaugeShowsWhatGitHubsAnswersToTheWritesLastReported() {
        // the comment, its reaction and the labels (the reads, a permission say, keep the stub's 4999)
        rig.wiremock.stubFor(com.github.tomakehurst.wiremock.client.WireMock.post(
                com.github.tomakehurst.wiremock.client.WireMock.urlPathMatching(GitHubRig.API_REPO + "/issues/.+"))
                .atPriority(1).willReturn(com.github.tomakehurst.wiremock.client.WireMock.okJson("{\"id\":555}")
                        .withStatus(201).withHeader("X-RateLimit-Limit", "5000")
                        .withHeader("X-RateLimit-Remaining", "4321")));
        accepted(rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which database?")));
        assertEquals(1, rig.comments(1).size());
        assertEquals(1, rig.requests("POST", GitHubRig.API_REPO + "/issues/1/labels").size());
        String metrics = rig.metrics();
        assertTrue(metrics.matches("(?s).*\nagentx_github_rate_limit_remaining\\{installation=\"\\d+\"} 4321\\.0\n.*"),
                metrics);
    }

    @Test
    void answerIsPostedAndStatusLabelsFollowTheLedger() {
        accepted(rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which DB?")));
        clock.advance(Duration.ofMinutes(5));
        accepted(rig.deliver("issue_comment", rig.comment("arch", 1, "/CLARIFY Answer Postgres, see ADR-7.")));
        ClarificationRecord r = record(1, 0);
        assertEquals(Status.ANSWERED, r.status());
        assertEquals("Postgres, see ADR-7.", r.lastAnswer().orElseThrow().body());
        List<String> comments = rig.comments(1);
        assertEquals(2, comments.size());
        assertTrue(comments.get(1).contains("\"kind\":\"answer\""), comments.get(1));
        assertTrue(comments.get(1).contains("> Postgres, see ADR-7."), comments.get(1));
        List<String> removed = rig.requests("DELETE", GitHubRig.API_REPO + "/issues/1/labels/.+").stream()
                .map(q -> q.getUrl()).toList();
        assertEquals(2, removed.size(), removed.toString());
        assertTrue(removed.stream().anyMatch(u -> u.contains("clarification")), removed.toString());
    }

    @Test
    void teamMembersActInTheirRole() {
        accepted(rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which DB?")));
        accepted(rig.deliver("issue_comment", rig.comment("team-arch", 1, "/clarify answer CLR-1-001 Postgres")));
        assertEquals(Status.ANSWERED, record(1, 0).status());
        assertEquals(List.of("{\"content\":\"+1\"}", "{\"content\":\"+1\"}"), rig.reactions());
    }

    @Test
    void followUpsToTheRoundLimitEscalateAndAMaintainerResolves() {
        accepted(rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Q1")));
        for (int round = 1; round <= 5; round++) {
            accepted(rig.deliver("issue_comment", rig.comment("arch", 1, "/clarify answer A" + round)));
            if (round < 5) {
                accepted(rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify followup CLR-1-001 Q"
                        + (round + 1))));
            }
        }
        assertEquals(5, record(1, 0).round());
        accepted(rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify followup CLR-1-001 Q6?")));
        ClarificationRecord r = record(1, 0);
        assertEquals(Status.ESCALATED, r.status());
        List<String> comments = rig.comments(1);
        String refusal = comments.stream().filter(c -> c.contains("MAX_ROUNDS_EXCEEDED")).findFirst().orElseThrow();
        assertTrue(refusal.startsWith("<!-- agentx-effect:") && refusal.contains("@eng this command was not carried out"),
                refusal);
        // the escalation comment is queued before the reply: the reply does not place it
        assertTrue(refusal.contains("CLR-1-001 is escalated; its escalation summary is posted as a comment of its own"),
                refusal);
        assertFalse(refusal.contains("below"), refusal);
        String escalation = comments.stream().filter(c -> c.contains("\"kind\":\"escalation\"")).findFirst()
                .orElseThrow();
        assertTrue(escalation.contains("Rounds used: 5 of 5"), escalation);
        assertTrue(escalation.contains("Who may resolve it: maintainers of this repository (permission write or higher)"),
                escalation);
        assertTrue(rig.reactions().get(rig.reactions().size() - 1).contains("confused"));
        assertTrue(rig.requests("POST", GitHubRig.API_REPO + "/issues/1/labels").stream()
                .anyMatch(q -> q.getBodyAsString().contains("clarification:escalated")));

        // the requester is no maintainer (read permission): refused
        accepted(rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify resolve CLR-1-001 my call")));
        assertEquals(Status.ESCALATED, record(1, 0).status());
        assertTrue(rig.comments(1).get(rig.comments(1).size() - 1).contains("**NOT_PERMITTED**"));

        // a maintainer (admin) resolves it
        accepted(rig.deliver("issue_comment", rig.comment("boss", 1, "/clarify resolve CLR-1-001 Postgres it is.")));
        r = record(1, 0);
        assertEquals(Status.RESOLVED, r.status());
        assertEquals("boss", r.thread().get(r.thread().size() - 1).from());
        String last = rig.comments(1).get(rig.comments(1).size() - 1);
        assertTrue(last.contains("resolved by **boss**") && last.contains("\"kind\":\"resolution\""), last);
        assertTrue(rig.requests("DELETE", GitHubRig.API_REPO + "/issues/1/labels/.+").stream()
                .anyMatch(q -> q.getUrl().endsWith("clarification:escalated")
                        || q.getUrl().endsWith("clarification%3Aescalated")));
    }

    @Test
    void unmappedAndNonRequesterUsersAreRefusedWithAReasonAndAReaction() {
        accepted(rig.deliver("issue_comment", rig.comment("stranger", 1, "/clarify @architect Hello?")));
        assertFalse(rig.hasLedger(1));
        String reply = rig.comments(1).get(0);
        assertTrue(reply.contains("**UNMAPPED_USER**") && reply.contains("engineer = [\"stranger\"]"), reply);
        assertEquals(List.of("{\"content\":\"confused\"}"), rig.reactions());

        accepted(rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Q")));
        accepted(rig.deliver("issue_comment", rig.comment("rev", 1, "/clarify answer CLR-1-001 not mine")));
        assertEquals(Status.PENDING, record(1, 0).status());
        assertTrue(rig.comments(1).get(rig.comments(1).size() - 1).contains("**NOT_PERMITTED**"));
        accepted(rig.deliver("issue_comment", rig.comment("writer", 1, "/clarify abandon CLR-1-001 not needed")));
        assertEquals(Status.ABANDONED, record(1, 0).status(), "a maintainer (write) may abandon");
    }

    @Test
    void aMaintainersRefusalHintsAtTheCommandThatWasRefused() {
        accepted(rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Q")));
        accepted(rig.deliver("issue_comment", rig.comment("rev", 1, "/clarify abandon CLR-1-001 not needed")));
        accepted(rig.deliver("issue_comment", rig.comment("rev", 1, "/clarify escalate CLR-1-001 stuck")));
        accepted(rig.deliver("issue_comment", rig.comment("rev", 1, "/clarify accept CLR-1-001")));
        accepted(rig.deliver("issue_comment", rig.comment("rev", 1, "/clarify resolve CLR-1-001 done")));
        List<String> replies = rig.comments(1).subList(1, 5);
        List<String> hints = List.of("comment /clarify abandon CLR-1-001 &lt;reason&gt;.",
                "comment /clarify escalate CLR-1-001 &lt;reason&gt;.", "comment /clarify accept CLR-1-001.",
                "comment /clarify resolve CLR-1-001 &lt;decision&gt;.");
        for (int i = 0; i < hints.size(); i++) {
            assertTrue(replies.get(i).contains("**NOT_PERMITTED**") && replies.get(i).contains("Ask one of them to "
                    + hints.get(i)), replies.get(i));
        }
        assertEquals(Status.PENDING, record(1, 0).status());
    }

    @Test
    void aFollowUpByTheTargetIsRefusedWithAHintToAnswerIt() {
        accepted(rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Q")));
        accepted(rig.deliver("issue_comment", rig.comment("arch", 1, "/clarify followup CLR-1-001 And you?")));
        String reply = rig.comments(1).get(1);
        assertTrue(reply.contains("**NOT_PERMITTED**") && reply.contains("answer it with /clarify answer CLR-1-001 "
                + "&lt;answer&gt;."), reply);
        assertFalse(reply.contains("open your own"), "no hint to ask themselves: " + reply);

        accepted(rig.deliver("issue_comment", rig.comment("rev", 1, "/clarify followup CLR-1-001 And me?")));
        reply = rig.comments(1).get(2);
        assertTrue(reply.contains("open your own with /clarify @&#8203;architect &lt;question&gt;."), reply);
    }

    @Test
    void aRefusalQuotesEveryLineOfTheCommand() {
        accepted(rig.deliver("issue_comment", rig.comment("stranger", 1, String.join("\n",
                "/clarify @architect First line", "second line for @someone", "```",
                "/clarify resolve CLR-1-001 in code", "```", "", "", "/clarify status"))));
        String reply = rig.comments(1).get(0);
        assertTrue(reply.contains("not carried out:\n\n> /clarify @&#8203;architect First line\n"
                + "> second line for @&#8203;someone\n> ```\n> /clarify resolve CLR-1-001 in code\n> ```\n\n"
                + "**UNMAPPED_USER**"), reply);
        // the quoted lines start no command
        assertEquals(List.of(), dev.agentx.clarify.github.commands.CommandParser.parse(reply));
    }

    @Test
    void aLongMultiLineCommandIsQuotedInPartWithTheCountOfTheWholeCommand() {
        String command = "/clarify @architect Which cache?\n" + "more about the cache\n".repeat(100);
        accepted(rig.deliver("issue_comment", rig.comment("stranger", 1, command + "\n\n")));
        String reply = rig.comments(1).get(0);
        int start = reply.indexOf("not carried out:\n\n") + "not carried out:\n\n".length();
        String quoted = reply.substring(start, reply.indexOf("\n\n**UNMAPPED_USER**")).replaceAll("(?m)^> ?", "")
                .replace("@&#8203;", "@");
        java.util.regex.Matcher note = java.util.regex.Pattern.compile("\n\n\\*\\[\\.\\.\\. ([0-9,]+) more characters "
                + "not shown]\\*$").matcher(quoted);
        assertTrue(note.find(), quoted);
        String shown = quoted.substring(0, note.start());
        assertTrue(command.startsWith(shown) && shown.contains("\nmore about the cache\n"), shown);
        assertEquals(command.strip().length() - shown.length(), Integer.parseInt(note.group(1).replace(",", "")));
    }

    @Test
    void scopeViolationNamesTheAllowedTargets() {
        accepted(rig.deliver("issue_comment", rig.comment("rev", 1, "/clarify @pm Why this feature?")));
        assertFalse(rig.hasLedger(1));
        String reply = rig.comments(1).get(0);
        assertTrue(reply.contains("**SCOPE_VIOLATION**") && reply.contains("Allowed: [engineer, architect]"), reply);
        assertEquals(List.of("{\"content\":\"confused\"}"), rig.reactions());
    }

    @Test
    void typeLabelSelectsTheWorkflowAndBlockingIsDowngradedWithAReply() {
        ObjectNode c = rig.comment("eng", 1, "/clarify @architect Crash cause?");
        GitHubRig.addIssueLabel(c, "type:bug");
        accepted(rig.deliver("issue_comment", c));
        ClarificationRecord r = record(1, 0);
        assertFalse(r.blocking());
        assertEquals(6, r.maxRounds());
        List<String> comments = rig.comments(1);
        assertTrue(comments.get(1).contains("Downgraded to non-blocking"), comments.toString());
    }

    @Test
    void severalCommandsInOneCommentAndNoneInCodeOrQuotes() {
        accepted(rig.deliver("issue_comment", rig.comment("eng", 1, String.join("\n",
                "/clarify @architect First?", "more detail", "/clarify @pm --non-blocking Second?",
                "```", "/clarify @architect in code", "```", "> /clarify @architect quoted",
                "<!-- /clarify @architect hidden -->", "`/clarify @architect inline`"))));
        assertEquals(2, rig.ledger(1).clarifications().size());
        assertEquals("First?\nmore detail", record(1, 0).thread().get(0).body());
        assertFalse(record(1, 1).blocking());
        assertEquals(List.of("{\"content\":\"+1\"}"), rig.reactions());
    }

    @Test
    void statusAndHelpReply() {
        accepted(rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Q\n/clarify status\n/clarify help")));
        List<String> comments = rig.comments(1);
        assertEquals(3, comments.size());
        assertTrue(comments.get(1).contains("**CLR-1-001** `pending` engineer -> architect"), comments.get(1));
        assertTrue(comments.get(2).contains("/clarify followup CLR-N-NNN <question>") && comments.get(2)
                .contains("@eng acts as: engineer"), comments.get(2));
    }

    @Test
    void labelTriggerOpensABlockingClarificationAndRemovesTheLabel() {
        accepted(rig.deliver("issues", rig.labeled("eng", 1, "clarify:architect")));
        ClarificationRecord r = record(1, 0);
        assertEquals("engineer", r.from());
        assertEquals("architect", r.to());
        assertTrue(r.blocking());
        assertEquals("Spelling error in the README file", r.topic());
        assertEquals(1, rig.requests("DELETE", GitHubRig.API_REPO + "/issues/1/labels/clarify.*architect").size());
        assertEquals(1, rig.comments(1).size());
    }

    @Test
    void aTriggerLabelFromABotNotMappedToARoleAsksNothingButIsRemoved() {
        accepted(rig.deliver("issues", rig.labeled("dependabot[bot]", 1, "clarify:architect")));
        assertFalse(rig.hasLedger(1), "no question asked");
        assertEquals(1, rig.requests("DELETE", GitHubRig.API_REPO + "/issues/1/labels/clarify.*architect").size());
        assertEquals(0, rig.comments(1).size());
    }

    @Test
    void issueOpenedRunsTheCommandsInItsBodyAndReactsToTheIssue() {
        ObjectNode p = rig.issueEvent("opened", "eng", 7);
        ((ObjectNode) p.get("issue")).put("body", "Some context.\n\n/clarify @architect REST or gRPC?");
        accepted(rig.deliver("issues", p));
        assertEquals("CLR-7-001", record(7, 0).id());
        assertEquals(1, rig.requests("POST", GitHubRig.API_REPO + "/issues/7/reactions").size());
    }

    @Test
    void closingTheIssueAbandonsItsActiveClarifications() {
        accepted(rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Q1\n/clarify @pm Q2")));
        accepted(rig.deliver("issues", rig.issueEvent("closed", "eng", 1)));
        assertTrue(rig.ledger(1).clarifications().stream().allMatch(r -> r.status() == Status.ABANDONED));
        List<String> comments = rig.comments(1);
        assertEquals(4, comments.size());
        assertTrue(comments.get(3).contains("abandoned by **eng**") && comments.get(3).contains("issue #1 was closed"),
                comments.get(3));
    }

    @Test
    void duplicateDeliveryIsAcknowledgedWithoutASecondEffect() {
        ObjectNode c = rig.comment("eng", 1, "/clarify @architect Q");
        String id = rig.nextDeliveryId();
        accepted(rig.deliver("issue_comment", c, id));
        int requests = rig.allRequests();
        GitHubRig.Response again = rig.deliver("issue_comment", c, id);
        assertEquals(200, again.status(), again.body());
        assertEquals(1, rig.ledger(1).clarifications().size());
        assertEquals(requests, rig.allRequests());
        // still a duplicate after a restart
        rig.start();
        assertEquals(200, rig.deliver("issue_comment", c, id).status());
        assertEquals(1, rig.ledger(1).clarifications().size());
    }

    @Test
    void badOrMissingSignatureIsRefusedAndNothingIsWritten() throws Exception {
        byte[] body = rig.bytes(rig.comment("eng", 1, "/clarify @architect Q"));
        GitHubRig.Response bad = rig.send("POST", body, java.util.Map.of("Content-Type", "application/json",
                "X-GitHub-Event", "issue_comment", "X-GitHub-Delivery", "d-1",
                "X-Hub-Signature-256", dev.agentx.clarify.github.webhook.SignatureVerifier.sign("wrong", body)));
        assertEquals(401, bad.status());
        GitHubRig.Response missing = rig.send("POST", body, java.util.Map.of("Content-Type", "application/json",
                "X-GitHub-Event", "issue_comment", "X-GitHub-Delivery", "d-2"));
        assertEquals(401, missing.status());
        assertFalse(rig.hasLedger(1));
        assertEquals(0, rig.allRequests());
        assertEquals(0, rig.mode().pendingDeliveries());
        assertNoDeliveryRecorded();
        // the rotated-out secret still verifies while it is configured
        GitHubRig.Response old = rig.send("POST", body, java.util.Map.of("Content-Type", "application/json",
                "X-GitHub-Event", "issue_comment", "X-GitHub-Delivery", "d-3",
                "X-Hub-Signature-256", dev.agentx.clarify.github.webhook.SignatureVerifier.sign(GitHubRig.OLD_SECRET, body)));
        assertEquals(202, old.status());
    }

    /** Nothing was queued and no id recorded as received: the data dir's inbox (the PostgreSQL run overrides this). */
    void assertNoDeliveryRecorded() throws java.io.IOException {
        try (var queue = java.nio.file.Files.list(rig.data.resolve("inbox/queue"))) {
            assertEquals(0, queue.mapToLong(f -> f.toFile().length()).sum(), "nothing appended to the queue");
        }
        String journal = new String(java.nio.file.Files.readAllBytes(rig.data.resolve("inbox/journal")),
                java.nio.charset.StandardCharsets.UTF_8);
        assertFalse(journal.contains("\"id\""), "no id recorded as seen: " + journal);
    }

    @Test
    void malformedRequestsGetTheirStatusCodes() {
        byte[] junk = "{not json".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        String sig = dev.agentx.clarify.github.webhook.SignatureVerifier.sign(GitHubRig.SECRET, junk);
        assertEquals(400, rig.send("POST", junk, java.util.Map.of("Content-Type", "application/json",
                "X-GitHub-Event", "issue_comment", "X-GitHub-Delivery", "j-1", "X-Hub-Signature-256", sig)).status());
        assertEquals(400, rig.send("POST", junk, java.util.Map.of("Content-Type", "application/json",
                "X-GitHub-Delivery", "j-2", "X-Hub-Signature-256", sig)).status());
        assertEquals(400, rig.send("POST", junk, java.util.Map.of("Content-Type", "application/json",
                "X-GitHub-Event", "issue_comment", "X-Hub-Signature-256", sig)).status());
        assertEquals(415, rig.send("POST", junk, java.util.Map.of("Content-Type", "application/x-www-form-urlencoded",
                "X-GitHub-Event", "issue_comment", "X-GitHub-Delivery", "j-3", "X-Hub-Signature-256", sig)).status());
        GitHubRig.Response put = rig.send("PUT", junk, java.util.Map.of("Content-Type", "application/json"));
        assertEquals(405, put.status());
        assertEquals(405, rig.send("GET", null, java.util.Map.of()).status());
        GitHubRig.Response health = rig.request("GET", rig.mode().port(), "/healthz", null, java.util.Map.of());
        assertEquals(200, health.status());
        assertTrue(health.body().contains("\"status\":\"ok\""), health.body());
        assertEquals(0, rig.mode().pendingDeliveries());
        assertEquals(0, rig.allRequests());
    }

    /**
     * A monitor pass that dies after its stale mark (as a process killed there): on files the mark
     * is written and the notice is not; the issue's next sync queues it. On PostgreSQL the mark goes
     * with the pass, and the next pass makes both. Either way one notice, also after a restart.
     */
    @Test
    void aStaleNoticeThatAPassDiedBeforeQueuingIsPostedOnceByTheIssuesNextSync() {
        rig.close();
        java.util.concurrent.atomic.AtomicBoolean die = new java.util.concurrent.atomic.AtomicBoolean();
        RepositoryMonitor dying = repo -> {
            List<dev.agentx.clarify.routing.Outcome> outcomes = RepositoryMonitor.STANDARD.run(repo);
            if (!outcomes.isEmpty() && die.getAndSet(false)) {
                throw new IllegalStateException("killed after the stale mark");
            }
            return outcomes;
        };
        rig = configure(new GitHubRig(dir.resolve("data-stale"), clock)).monitor(dying);
        rig.start();
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which DB?"), "s-1")
                .status());
        die.set(true);
        clock.advance(Duration.ofMinutes(31)); // past the SLA
        assertEquals(202, rig.deliver("issue_comment", rig.comment("rev", 2, "unrelated"), "s-2").status());
        assertEquals(1, rig.comments(1).size(), "no notice yet");

        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "Any news?"), "s-3").status());
        assertEquals(Status.STALE, rig.ledger(1).clarifications().get(0).status());
        List<String> comments = rig.comments(1);
        assertEquals(2, comments.size(), comments.toString());
        assertTrue(comments.get(1).contains("\"kind\":\"stale\""), comments.get(1));

        rig.start(); // a restart: its catch-up syncs every issue again
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "Still there?"), "s-4").status());
        assertEquals(comments, rig.comments(1), "nothing posted again");
    }

    /**
     * A record left stale past what the outbox and the claims remember of its notice's key (no
     * delivery ran a pass that would escalate it): the issue's next sync does not post the notice
     * again, and the pass after it escalates.
     */
    @Test
    void aRecordStaleLongerThanTheNoticeKeysAreKeptIsNotNoticedTwice() {
        rig.close();
        rig = configure(new GitHubRig(dir.resolve("data-old-stale"), clock)).monitor(RepositoryMonitor.STANDARD);
        rig.start();
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Which DB?"), "o-1")
                .status());
        clock.advance(Duration.ofMinutes(31));
        assertEquals(202, rig.deliver("issue_comment", rig.comment("rev", 2, "unrelated"), "o-2").status());
        assertEquals(Status.STALE, rig.ledger(1).clarifications().get(0).status());
        assertEquals(1, rig.comments(1).stream().filter(c -> c.contains("\"kind\":\"stale\"")).count());

        clock.advance(Duration.ofDays(31)); // no delivery all this time
        rig.mode().drain(); // the daily upkeep forgets effect keys past 30 days, claims past 7
        assertEquals(202, rig.deliver("issue_comment", rig.comment("eng", 1, "Anyone?"), "o-3").status());
        List<String> comments = rig.comments(1);
        assertEquals(1, comments.stream().filter(c -> c.contains("\"kind\":\"stale\"")).count(), comments.toString());
        assertEquals(Status.ESCALATED, rig.ledger(1).clarifications().get(0).status());
        assertTrue(comments.get(comments.size() - 1).contains("\"kind\":\"escalation\""), comments.toString());
    }

    @Test
    void bodiesOverTheLimitGet413() {
        rig.close();
        rig = configure(new GitHubRig(dir.resolve("data2"), clock)).maxBody(4096);
        rig.start();
        GitHubRig.Response r = rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Q"));
        assertEquals(413, r.status(), r.body());
        assertFalse(rig.hasLedger(1));
    }

    @Test
    void missingInstallationIsLoggedAndIgnored() {
        ObjectNode p = rig.fixture("issue_comment.created");
        ((ObjectNode) p.get("comment")).put("body", "/clarify @architect Q");
        ((ObjectNode) p.path("comment").get("user")).put("login", "eng");
        accepted(rig.deliver("issue_comment", p));
        assertFalse(rig.hasLedger(1));
        assertEquals(0, rig.allRequests());
        assertEquals(0, rig.mode().pendingDeliveries());
    }

    @Test
    void pingInstallationAndOtherEventsAreAcknowledged() {
        accepted(rig.deliver("ping", rig.fixture("ping.with-app_id")));
        accepted(rig.deliver("installation", rig.fixture("installation.created")));
        accepted(rig.deliver("installation_repositories", rig.fixture("installation_repositories.added")));
        accepted(rig.deliver("issue_comment", rig.fixture("issue_comment.edited")));
        ObjectNode odd = rig.issueEvent("transmogrified", "eng", 1);
        accepted(rig.deliver("issues", odd));
        accepted(rig.deliver("star", rig.json.createObjectNode().put("action", "created")));
        assertEquals(0, rig.allRequests());
        assertEquals(0, rig.mode().pendingDeliveries());
    }

    @Test
    void botsAndTheAppItselfAreIgnoredUnlessMappedToARole() {
        accepted(rig.deliver("issue_comment", rig.comment("dependabot[bot]", 1, "/clarify @architect Q")));
        ObjectNode own = rig.comment("agentx-clarify[bot]", 1, "/clarify @architect Q");
        ((ObjectNode) own.get("comment")).putObject("performed_via_github_app").put("id", GitHubRig.APP_ID);
        accepted(rig.deliver("issue_comment", own));
        assertFalse(rig.hasLedger(1));
        // nothing but the lookup of .github/agentx.toml (a repository may map a bot to a role)
        assertEquals(0, rig.allRequests() - rig.requests("GET", GitHubRig.API_REPO + "/contents/.*").size()
                - rig.requests("POST", "/app/installations/\\d+/access_tokens").size());
        // an agent working as a GitHub App acts when [roles] names it
        accepted(rig.deliver("issue_comment", rig.comment("agent-ux[bot]", 1, "/clarify @pm Which persona?")));
        assertEquals("ux-designer", record(1, 0).from());
        // a refusal names the bot and mentions no one
        accepted(rig.deliver("issue_comment", rig.comment("agent-ux[bot]", 1, "/clarify @nobody What?")));
        String refusal = rig.comments(1).get(rig.comments(1).size() - 1);
        assertTrue(refusal.contains("`agent-ux[bot]` this command was not carried out"), refusal);
        assertFalse(refusal.contains("@agent-ux"), refusal);
    }

    @Test
    void installationTokenIsCachedAndRefreshedBeforeItExpires() {
        String tokens = "/app/installations/1/access_tokens";
        accepted(rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify @architect Q")));
        accepted(rig.deliver("issue_comment", rig.comment("arch", 1, "/clarify answer A")));
        assertEquals(1, rig.requests("POST", tokens).size());
        String auth = rig.requests("POST", tokens).get(0).getHeader("Authorization");
        assertTrue(auth.startsWith("Bearer ey"), "the app's JWT: " + auth);
        assertTrue(rig.requests("POST", GitHubRig.API_REPO + "/issues/1/comments").get(0).getHeader("Authorization")
                .equals("token ghs_test_token"));
        clock.advance(Duration.ofMinutes(56)); // the token expires at +60 min; refreshed 5 min before
        rig.wiremock.stubFor(com.github.tomakehurst.wiremock.client.WireMock.post(tokens).atPriority(1).willReturn(
                com.github.tomakehurst.wiremock.client.WireMock.aResponse().withStatus(201)
                        .withHeader("Content-Type", "application/json").withBody("{\"token\":\"ghs_second\","
                                + "\"expires_at\":\"" + clock.instant().plusSeconds(3600) + "\"}")));
        accepted(rig.deliver("issue_comment", rig.comment("eng", 1, "/clarify resolve CLR-1-001")));
        assertEquals(2, rig.requests("POST", tokens).size());
        List<com.github.tomakehurst.wiremock.verification.LoggedRequest> posts = rig.requests("POST",
                GitHubRig.API_REPO + "/issues/1/comments");
        assertEquals("token ghs_second", posts.get(posts.size() - 1).getHeader("Authorization"));
    }
}
