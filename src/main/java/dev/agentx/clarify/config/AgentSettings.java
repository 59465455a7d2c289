package dev.agentx.clarify.config;

import dev.agentx.clarify.protocol.Autonomy;
import java.util.List;

/**
 * {@code [agents.<role>]}: how the hub gets that role's answers.
 *
 * @param channel human (default), command, http or auto
 * @param command argv of a local program (channel command), run without a shell
 * @param timeoutSeconds how long a command or http agent may take (per attempt)
 * @param url the endpoint of an http agent
 * @param secretEnv name of the environment variable holding the HMAC secret (http)
 * @param tokenEnv name of the environment variable holding a bearer token (http)
 * @param autonomy how far this role's automatic answers count on their own, or null (workflow, then config)
 * @param maxOutputBytes the most a command may print on stdout, or an http agent may send back
 * @param retries how often an http agent is tried again after a 5xx or a refused connection
 * @param escalateAfterFailures after this many failed or "cannot answer" attempts in a row on one
 *                              round, the hub escalates the record
 */
public record AgentSettings(String channel, List<String> command, int timeoutSeconds, String url,
                            String secretEnv, String tokenEnv, Autonomy autonomy, int maxOutputBytes, int retries,
                            int escalateAfterFailures) {
    public static final int DEFAULT_TIMEOUT_SECONDS = 120;
    public static final int DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024;
    public static final int DEFAULT_RETRIES = 2;
    public static final int DEFAULT_ESCALATE_AFTER_FAILURES = 3;

    public AgentSettings {
        command = command == null ? List.of() : List.copyOf(command);
    }

    /** Settings with the defaults for the newer keys. */
    public AgentSettings(String channel, List<String> command, int timeoutSeconds, String url, String secretEnv,
                         String tokenEnv) {
        this(channel, command, timeoutSeconds, url, secretEnv, tokenEnv, null, DEFAULT_MAX_OUTPUT_BYTES,
                DEFAULT_RETRIES, DEFAULT_ESCALATE_AFTER_FAILURES);
    }

    public static AgentSettings human() {
        return new AgentSettings("human", List.of(), DEFAULT_TIMEOUT_SECONDS, null, null, null);
    }
}
