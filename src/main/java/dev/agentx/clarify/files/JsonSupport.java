package dev.agentx.clarify.files;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;

/**
 * The JSON settings every state file shares: ISO-8601 timestamps. {@link #shared()} is created on
 * first use only (a configured ObjectMapper is thread-safe and never changed), so commands that
 * need no data binding never load it: that keeps the CLI's start-up light.
 */
public final class JsonSupport {
    private JsonSupport() {
    }

    /** A new mapper with the shared settings, for callers that configure it further. */
    public static ObjectMapper mapper() {
        return new ObjectMapper().registerModule(new JavaTimeModule())
                .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS);
    }

    /** The shared mapper, created on first use. Never reconfigure it. */
    public static ObjectMapper shared() {
        return Shared.MAPPER;
    }

    /** The shared mapper that indents its output. */
    public static ObjectMapper pretty() {
        return Shared.PRETTY;
    }

    private static final class Shared {
        static final ObjectMapper MAPPER = mapper();
        static final ObjectMapper PRETTY = mapper().enable(SerializationFeature.INDENT_OUTPUT);
    }
}
