package dev.agentx.clarify.github.outbox;

import dev.agentx.clarify.gate.MergeGate;
import dev.agentx.clarify.github.api.GitHubGateway;
import dev.agentx.clarify.github.api.GitHubGateway.CheckRunOutput;
import dev.agentx.clarify.github.api.GitHubGateway.CheckRunSeen;
import java.time.Clock;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends the merge gate's check run: one run per pull request and head commit, created once and
 * then updated. Each run carries its evaluation in its {@code external_id} ({@code
 * agentx-gate:<pull>:<sequence>}), so a send first lists the commit's runs of that name and
 * updates those of the pull request that an older evaluation left, leaves alone one a newer
 * evaluation already wrote, and creates a run only when the pull request has none on the commit.
 * Sent again after a crash, it finds the run the first attempt made and updates it; sent while
 * another replica created one too (a claim taken over), the look after its create finds both and
 * brings every older one to this evaluation, so no two runs on a commit disagree.
 */
final class CheckRunSender implements EffectSender<Effect.CheckRun> {
    private static final Logger LOG = LoggerFactory.getLogger(Outbox.class);
    static final String EXTERNAL_PREFIX = "agentx-gate:";
    private final GitHubGateway github;
    private final Clock clock;

    CheckRunSender(GitHubGateway github, Clock clock) {
        this.github = github;
        this.clock = clock;
    }

    /** The external id of the run of pull request {@code pull} as its evaluation {@code sequence} left it. */
    static String externalId(int pull, long sequence) {
        return EXTERNAL_PREFIX + pull + ":" + sequence;
    }

    /** The evaluation an external id of pull request {@code pull} names, or -1 when it is not one of its. */
    static long sequenceOf(String externalId, int pull) {
        String prefix = EXTERNAL_PREFIX + pull + ":";
        if (externalId == null || !externalId.startsWith(prefix)) {
            return -1;
        }
        try {
            return Long.parseLong(externalId.substring(prefix.length()));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    @Override
    public void send(Effect.CheckRun c, Attempt attempt) {
        CheckRunOutput out = new CheckRunOutput(MergeGate.CHECK_NAME, c.headSha(), externalId(c.issue(), c.sequence()),
                c.conclusion(), c.title(), c.summary(), c.detailsUrl(), clock.instant());
        List<CheckRunSeen> ours = ours(c);
        if (ours.isEmpty()) {
            github.createCheckRun(c.installation(), c.repo(), out);
            if (attempt.maybeTwice()) {
                bringUp(c, out, ours(c)); // another replica's run made meanwhile, older or newer
            }
            return;
        }
        bringUp(c, out, ours);
    }

    /** The runs of the gate on the effect's commit made for its pull request. */
    private List<CheckRunSeen> ours(Effect.CheckRun c) {
        return github.checkRuns(c.installation(), c.repo(), c.headSha(), MergeGate.CHECK_NAME).stream()
                .filter(r -> sequenceOf(r.externalId(), c.issue()) >= 0).toList();
    }

    /** Updates each of {@code runs} an older evaluation wrote to this one; a newer one's is left as it is. */
    private void bringUp(Effect.CheckRun c, CheckRunOutput out, List<CheckRunSeen> runs) {
        for (CheckRunSeen r : runs) {
            long seq = sequenceOf(r.externalId(), c.issue());
            if (seq < c.sequence()) {
                github.updateCheckRun(c.installation(), c.repo(), r.id(), out);
            } else if (seq > c.sequence()) {
                LOG.info("outbox: {} skipped on check run {}: a newer evaluation ({}) is there", c.key(), r.id(), seq);
            }
        }
    }
}
