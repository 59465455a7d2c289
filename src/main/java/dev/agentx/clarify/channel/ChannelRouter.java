package dev.agentx.clarify.channel;

import dev.agentx.clarify.config.AgentSettings;
import dev.agentx.clarify.config.AgentxConfig;
import dev.agentx.clarify.lock.Sleeper;
import dev.agentx.clarify.protocol.ClarificationRecord;
import java.nio.file.Path;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The channel the engine (and the monitor, when it asks a stale question again) talks to: picks
 * the target role's channel from {@code [agents.<role>]} (human when unset), and for automatic
 * channels counts failures in a row per record and round ({@link ChannelFailures}); when a round
 * has failed {@code escalate_after_failures} times the record is escalated with the last error.
 * A round whose agent answer waits for a person's acceptance (autonomy approve) is not asked again.
 * Never called under a ledger lock.
 */
public final class ChannelRouter implements AnswerChannel {
    /** Looked up on first use: the CLI must not start the logging system unless something is logged. */
    private static Logger log() {
        return LoggerFactory.getLogger(ChannelRouter.class);
    }

    /** Escalates a record whose channel keeps failing (the engine's escalateByHub), if it still waits on that round. */
    @FunctionalInterface
    public interface Escalator {
        void escalate(String id, int round, String reason);
    }

    private final AgentxConfig config;
    private final Map<String, AnswerChannel> channels;
    private final AnswerChannel human;
    private final ChannelFailures failures;
    private final Escalator escalator;
    private final Clock clock;

    /** @param channels the automatic channel of each configured role; roles not in it are human */
    public ChannelRouter(AgentxConfig config, Map<String, AnswerChannel> channels, AnswerChannel human,
                         ChannelFailures failures, Escalator escalator, Clock clock) {
        this.config = config;
        this.channels = Map.copyOf(channels);
        this.human = human;
        this.failures = failures;
        this.escalator = escalator;
        this.clock = clock;
    }

    /** Builds every configured role's channel: commands run in {@code workDir} with {@code env}. */
    public static ChannelRouter create(AgentxConfig config, Path workDir, Map<String, String> env,
                                       RequestContext context, ChannelFailures failures, Escalator escalator,
                                       Clock clock, Sleeper sleeper) {
        RequestJson json = new RequestJson(context);
        Map<String, AnswerChannel> channels = new LinkedHashMap<>();
        for (Map.Entry<String, AgentSettings> agent : config.agents().entrySet()) {
            String role = agent.getKey();
            AgentSettings s = agent.getValue();
            switch (s.channel()) {
                case "command" -> channels.put(role, new CommandChannel(role, s, workDir, env, json));
                case "http" -> channels.put(role, new HttpChannel(role, s, env, json, sleeper));
                case "auto" -> channels.put(role, new AutoChannel());
                case "human" -> {
                    // answered later by a person
                }
                default -> throw new IllegalArgumentException("unknown channel '" + s.channel() + "' for " + role);
            }
        }
        return new ChannelRouter(config, channels, new HumanChannel(), failures, escalator, clock);
    }

    /** The channel name configured for a role: human, command, http or auto. */
    public String channelOf(String role) {
        return channels.containsKey(role) ? config.agent(role).channel() : "human";
    }

    @Override
    public Delivery ask(QuestionRequest request) {
        AnswerChannel channel = channels.get(request.to());
        if (channel == null) {
            return human.ask(request);
        }
        if (ClarificationRecord.proposalOf(request.thread(), request.round()).isPresent()) {
            return new Delivery.Deferred(request.to() + "'s proposed answer to round " + request.round()
                    + " waits for a person: 'agentx clarify accept " + request.id() + "'");
        }
        AgentSettings s = config.agent(request.to());
        Delivery d;
        try {
            d = channel.ask(request);
        } catch (RuntimeException e) {
            log().warn("{} channel of {} threw on {}", s.channel(), request.to(), request.id(), e);
            d = new Delivery.Failed(request.to() + "'s " + s.channel() + " channel failed: " + e);
        }
        if (d instanceof Delivery.Failed f) {
            return failed(request, s, f);
        }
        try {
            failures.clear(request.id());
        } catch (RuntimeException e) {
            log().warn("channel failures of {} not cleared: {}", request.id(), e.getMessage());
        }
        return d;
    }

    private Delivery failed(QuestionRequest request, AgentSettings s, Delivery.Failed f) {
        int n;
        try {
            n = failures.failed(request.id(), request.round(), f.error(), clock.instant());
        } catch (RuntimeException e) {
            log().warn("channel failure of {} not counted: {}", request.id(), e.getMessage());
            return new Delivery.Failed(f.error() + " (the failure could not be counted: " + e.getMessage() + ")");
        }
        int limit = s.escalateAfterFailures();
        if (n < limit) {
            return new Delivery.Failed(f.error() + " (failure " + n + " of " + limit + " before escalation)");
        }
        String reason = request.to() + "'s " + s.channel() + " channel failed " + n + (n == 1 ? " time" : " times in a row")
                + " on round " + request.round() + "; last error: " + f.error();
        try {
            escalator.escalate(request.id(), request.round(), reason);
            failures.clear(request.id());
        } catch (RuntimeException e) {
            log().warn("could not escalate {} after channel failures: {}", request.id(), e.getMessage());
            return new Delivery.Failed(f.error() + " (failure " + n + " of " + limit + "; escalation failed: "
                    + e.getMessage() + ")");
        }
        return new Delivery.Failed(f.error() + " (failure " + n + " of " + limit + "; escalated to a human)");
    }
}
