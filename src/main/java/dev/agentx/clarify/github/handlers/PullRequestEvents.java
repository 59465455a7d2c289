package dev.agentx.clarify.github.handlers;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.gate.ClosingReferences;
import dev.agentx.clarify.github.Payloads;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.github.RepositoryNames;
import dev.agentx.clarify.github.gate.PullRequestGate;
import dev.agentx.clarify.github.inbox.DeliveryProcessor;
import dev.agentx.clarify.store.InboundDelivery;
import java.net.URI;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The merge gate's deliveries: {@code pull_request} opened, edited (its body), synchronize (a new
 * head commit), reopened, ready_for_review and closed, which keep the gate's record of the pull
 * request and the issues it closes and evaluate it; {@code check_run} rerequested on one of the
 * gate's runs, and {@code check_suite} rerequested on the App's suite of a pull request's head
 * commit ("Re-run all checks"), which evaluate it afresh. The evaluation and its check run are the {@link
 * PullRequestGate}'s, inside the delivery's unit.
 */
final class PullRequestEvents {
    private static final Logger LOG = LoggerFactory.getLogger(DeliveryHandler.class);
    private final long appId;
    private final RepositoryNames names;
    private final Function<RepoRef, LocalMode> repos;
    private final PullRequestGate gate;

    PullRequestEvents(long appId, RepositoryNames names, Function<RepoRef, LocalMode> repos, PullRequestGate gate) {
        this.appId = appId;
        this.names = names;
        this.repos = repos;
        this.gate = gate;
    }

    /** The repository and installation a delivery is about, as the server keeps it. */
    private record Where(long installation, RepoRef ref, String htmlUrl) {
    }

    DeliveryProcessor.Changes pullRequest(InboundDelivery d, JsonNode p, String action) {
        String acted = switch (action) {
            case "opened", "synchronize", "reopened", "ready_for_review" -> "open";
            // a title's edit leaves what the body closes as it was
            case "edited" -> p.path("changes").has("body") ? "open" : "";
            case "closed" -> "closed";
            default -> "";
        };
        if (acted.isEmpty()) {
            LOG.debug("delivery {}: pull_request.{} does not concern the merge gate", d.id(), action);
            return (progress, save) -> DeliveryProcessor.NOTHING_AFTER;
        }
        Where w = where(d, p);
        JsonNode pr = p.path("pull_request");
        long n = Payloads.id(pr.get("number"));
        int number = n > 0 && n <= Integer.MAX_VALUE ? (int) n : 0;
        String head = pr.path("head").path("sha").asText("");
        if (w == null || number < 1 || !head.matches("[0-9a-f]{40}")) {
            LOG.warn("delivery {} (pull_request.{}): no repository id, installation, pull request number or head "
                    + "commit the gate can use; ignored", d.id(), action);
            return (progress, save) -> DeliveryProcessor.NOTHING_AFTER;
        }
        SortedSet<Integer> closes = ClosingReferences.of(pr.path("body").asText(""), w.ref().owner(), w.ref().name(),
                webHost(w.htmlUrl()));
        boolean open = acted.equals("open") && !"closed".equals(pr.path("state").asText("open"));
        PullRequestGate.PullEvent event = new PullRequestGate.PullEvent(number, open, head, closes, w.htmlUrl());
        LocalMode repo = repos.apply(w.ref());
        return (progress, save) -> {
            gate.pullRequest(repo, w.ref(), w.installation(), event);
            return DeliveryProcessor.NOTHING_AFTER;
        };
    }

    DeliveryProcessor.Changes checkRun(InboundDelivery d, JsonNode p, String action) {
        if (!"rerequested".equals(action)) {
            return (progress, save) -> DeliveryProcessor.NOTHING_AFTER;
        }
        JsonNode run = p.path("check_run");
        long app = run.path("app").path("id").asLong(-1);
        int pull = pullOf(run);
        String head = run.path("head_sha").asText("");
        Where w = where(d, p);
        if (app != appId || pull < 1 || w == null || !head.matches("[0-9a-f]{40}")) {
            LOG.info("delivery {}: check_run.rerequested of run {} is not one of the merge gate's; ignored", d.id(),
                    run.path("id").asText("?"));
            return (progress, save) -> DeliveryProcessor.NOTHING_AFTER;
        }
        LocalMode repo = repos.apply(w.ref());
        return (progress, save) -> {
            if (!gate.rerequested(repo, w.ref(), w.installation(), pull, head)) {
                LOG.info("delivery {}: run {} re-requested on {}#{} at {}, which is not the open pull request's head; "
                        + "nothing to evaluate", d.id(), run.path("id").asText("?"), w.ref(), pull, head);
            }
            return DeliveryProcessor.NOTHING_AFTER;
        };
    }

    /**
     * "Re-run all checks" on a pull request: GitHub re-requests each App's suite of its head commit.
     * Each open pull request the suite lists whose head is that commit is evaluated afresh, as a
     * re-run of the gate's own run is; another App's suite is not the gate's to answer.
     */
    DeliveryProcessor.Changes checkSuite(InboundDelivery d, JsonNode p, String action) {
        if (!"rerequested".equals(action)) {
            return (progress, save) -> DeliveryProcessor.NOTHING_AFTER;
        }
        JsonNode suite = p.path("check_suite");
        long app = suite.path("app").path("id").asLong(-1);
        String head = suite.path("head_sha").asText("");
        Where w = where(d, p);
        if (app != appId || w == null || !head.matches("[0-9a-f]{40}")) {
            LOG.info("delivery {}: check_suite.rerequested of suite {} is not the merge gate's; ignored", d.id(),
                    suite.path("id").asText("?"));
            return (progress, save) -> DeliveryProcessor.NOTHING_AFTER;
        }
        SortedSet<Integer> pulls = new TreeSet<>();
        for (JsonNode pr : suite.path("pull_requests")) {
            long n = Payloads.id(pr.get("number"));
            if (n > 0 && n <= Integer.MAX_VALUE && head.equals(pr.path("head").path("sha").asText(""))) {
                pulls.add((int) n);
            }
        }
        LocalMode repo = repos.apply(w.ref());
        return (progress, save) -> {
            for (int pull : pulls) {
                if (!gate.rerequested(repo, w.ref(), w.installation(), pull, head)) {
                    LOG.info("delivery {}: suite {} re-requested on {}#{} at {}, which is not an open pull request's "
                            + "head the gate knows; nothing to evaluate", d.id(), suite.path("id").asText("?"), w.ref(),
                            pull, head);
                }
            }
            return DeliveryProcessor.NOTHING_AFTER;
        };
    }

    /** The pull request a run of the gate names in its external id ({@code agentx-gate:<pull>:<seq>}), or 0. */
    private static int pullOf(JsonNode run) {
        String external = run.path("external_id").asText("");
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("agentx-gate:([1-9][0-9]{0,8}):[0-9]{1,18}")
                .matcher(external);
        return m.matches() ? Integer.parseInt(m.group(1)) : 0;
    }

    private Where where(InboundDelivery d, JsonNode p) {
        long installation = Payloads.id(p.path("installation").get("id"));
        JsonNode r = p.path("repository");
        long id = Payloads.id(r.get("id"));
        if (installation == 0 || id == 0) {
            return null;
        }
        RepoRef named;
        try {
            named = new RepoRef(r.path("owner").path("login").asText(null), r.path("name").asText(null), id);
        } catch (IllegalArgumentException e) {
            LOG.warn("delivery {} ({}): {}; ignored", d.id(), d.event(), e.getMessage());
            return null;
        }
        String html = r.path("html_url").asText("");
        if (!html.matches("https?://[A-Za-z0-9.:-]+/[^\\s?#]+")) {
            return null;
        }
        return new Where(installation, names.seen(named, installation, d.receivedAt()), html);
    }

    /** {@code https://github.com} of {@code https://github.com/OWNER/REPO}. */
    private static String webHost(String htmlUrl) {
        URI u = URI.create(htmlUrl);
        return u.getScheme() + "://" + u.getRawAuthority();
    }
}
