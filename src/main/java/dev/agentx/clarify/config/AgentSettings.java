package dev.agentx.clarify.config;

import java.util.List;

/**
 * {@code [agents.<role>]}: how the hub gets that role's answers.
 *
 * @param channel human (default), command, http or auto
 * @param command argv of a local program (channel command), run without a shell
 * @param timeoutSeconds how long a command or http agent may take
 * @param url the endpoint of an http agent
 * @param secretEnv name of the environment variable holding the HMAC secret (http)
 * @param tokenEnv name of the environment variable holding a bearer token (http)
 */
public record AgentSettings(String channel, List<String> command, int timeoutSeconds, String url,
                            String secretEnv, String tokenEnv) {
    public static final int DEFAULT_TIMEOUT_SECONDS = 120;

    public AgentSettings {
        command = command == null ? List.of() : List.copyOf(command);
    }

    public static AgentSettings human() {
        return new AgentSettings("human", List.of(), DEFAULT_TIMEOUT_SECONDS, null, null, null);
    }
}
