package dev.agentx.clarify.github.notify;

import dev.agentx.clarify.channel.Signatures;
import dev.agentx.clarify.config.AgentxConfig;
import dev.agentx.clarify.config.NotifyReceiver;
import dev.agentx.clarify.github.RepoRef;
import dev.agentx.clarify.github.outbox.Effect;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The notifications a change of a clarification makes: for each {@code [[notify]]} receiver of the
 * repository's config in force that wants the event and the roles, one {@link Effect.Notification},
 * queued by the issue mirror together with the comment of the same change, so both are committed
 * with the change or neither ({@code github.handlers.IssueMirror}). The events, by thread entry:
 * a question is {@code asked} (each round), an answer that counts {@code answered} (not an agent's
 * proposal, which waits for a person), an escalation {@code escalated}, a resolution {@code
 * resolved} or {@code abandoned} as the record ended; the monitor's stale notice is {@code stale}.
 *
 * <p>Keys: {@code notify/<receiver>/<owner>/<repo>#<issue>/<id>/<entry>} (stale: {@code
 * .../<id>/stale/<round>/<staleAfter>}), so queuing the same change again is dropped as a repeat,
 * on one server or several. The delivery id is derived from the key, the same on every attempt and
 * whichever replica sends it. A receiver a repository's file added gets that repository's events
 * only: the config in force for a repository is the server's receivers and its own.
 */
public final class Notifier {
    private static final Pattern COMMENT_REQUEST = Pattern.compile("comment/([1-9][0-9]{0,18})/.*");
    private final String web;

    /** {@code web}: GitHub's web address the links go to ({@link #webOf}). */
    public Notifier(String web) {
        this.web = web.replaceAll("/+$", "");
    }

    /**
     * GitHub's web address for the REST API at {@code apiUrl}: {@code https://github.com} for
     * {@code https://api.github.com}, {@code https://HOST} for GitHub Enterprise Server's
     * {@code https://HOST/api/v3}, else the API's own address.
     */
    public static String webOf(String apiUrl) {
        String a = apiUrl.replaceAll("/+$", "");
        if (a.equals("https://api.github.com")) {
            return "https://github.com";
        }
        return a.endsWith("/api/v3") ? a.substring(0, a.length() - "/api/v3".length()) : a;
    }

    /** The event thread entry {@code index} of {@code r} is, if any ({@link Notifier}). */
    static Optional<String> event(ClarificationRecord r, int index) {
        ThreadEntry e = r.thread().get(index);
        return switch (e.type()) {
            case QUESTION -> Optional.of("asked");
            case ANSWER -> e.isAnswer() ? Optional.of("answered") : Optional.empty();
            case ESCALATION -> Optional.of("escalated");
            case RESOLUTION -> Optional.of(r.status() == Status.ABANDONED ? "abandoned" : "resolved");
        };
    }

    /** The notifications of thread entry {@code index} of {@code r}, under {@code config}. */
    public List<Effect> entry(AgentxConfig config, RepoRef repo, int issue, long installation,
                              ClarificationRecord r, int index) {
        Optional<String> event = event(r, index);
        if (event.isEmpty() || config.receivers().isEmpty()) {
            return List.of();
        }
        ThreadEntry e = r.thread().get(index);
        return make(config, repo, issue, installation, r, e, event.get(), r.id() + "/" + index,
                commentUrl(repo, issue, e));
    }

    /** The notifications of the monitor's stale notice of {@code r} (the question still unanswered). */
    public List<Effect> stale(AgentxConfig config, RepoRef repo, int issue, long installation,
                              ClarificationRecord r) {
        Optional<ThreadEntry> question = r.lastQuestion();
        if (question.isEmpty() || config.receivers().isEmpty()) {
            return List.of();
        }
        return make(config, repo, issue, installation, r, question.get(), "stale", r.id() + "/stale/" + r.round()
                + "/" + r.staleAfter(), commentUrl(repo, issue, question.get()));
    }

    private List<Effect> make(AgentxConfig config, RepoRef repo, int issue, long installation, ClarificationRecord r,
                              ThreadEntry e, String event, String change, String commentUrl) {
        List<Effect> out = new ArrayList<>();
        for (NotifyReceiver to : config.receivers()) {
            if (!to.wants(event, r.from(), r.to())) {
                continue;
            }
            String key = "notify/" + to.id() + "/" + repo.fullName() + "#" + issue + "/" + change;
            String delivery = deliveryId(key);
            NotificationBody.About about = new NotificationBody.About(event, delivery, repo.fullName(), issue,
                    issueUrl(repo, issue), commentUrl, r, e);
            String body = NotifyReceiver.SLACK.equals(to.format()) ? NotificationBody.slack(about)
                    : NotificationBody.json(about);
            String signature = to.secret() == null ? null : Signatures.sign(to.secret(),
                    body.getBytes(StandardCharsets.UTF_8));
            out.add(new Effect.Notification(key, installation, repo, issue, to.id(), to.url(), to.allowPrivate(),
                    event, r.id(), delivery, body, signature));
        }
        return out;
    }

    private String issueUrl(RepoRef repo, int issue) {
        return web + "/" + repo.fullName() + "/issues/" + issue;
    }

    /**
     * The comment that carried the entry's command, when a comment did ({@code request} {@code
     * comment/<id>/...}); null for an entry from an answer channel, a label, the issue's body or the
     * monitor. The App's own comment of the change is not known yet when the notification is made.
     */
    private String commentUrl(RepoRef repo, int issue, ThreadEntry e) {
        if (e.request() == null) {
            return null;
        }
        Matcher m = COMMENT_REQUEST.matcher(e.request());
        return m.matches() ? issueUrl(repo, issue) + "#issuecomment-" + m.group(1) : null;
    }

    /** The delivery id of the notification {@code key}: a UUID made from its hash, the same wherever it is made. */
    static String deliveryId(String key) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
            long hi = 0;
            long lo = 0;
            for (int i = 0; i < 8; i++) {
                hi = (hi << 8) | (d[i] & 0xff);
                lo = (lo << 8) | (d[8 + i] & 0xff);
            }
            hi = (hi & ~0xf000L) | 0x8000L; // version 8: made by the application
            lo = (lo & 0x3fffffffffffffffL) | 0x8000000000000000L; // the RFC's variant
            return new UUID(hi, lo).toString();
        } catch (NoSuchAlgorithmException ex) {
            throw new IllegalStateException(ex);
        }
    }
}
