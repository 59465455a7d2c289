package dev.agentx.clarify.files;

import com.fasterxml.jackson.core.JsonFactory;
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
        return configure(new ObjectMapper());
    }

    /**
     * The shared settings for documents whose objects are keyed by ids (an issue's note counts the
     * entries posted per record id), made on first use: its parsers keep no table of the field
     * names they meet. A mapper's parsers share one such table, which keeps every name met (up to
     * thousands) and which a parser copies whole before adding a name it lacks: with ids for keys,
     * nearly every read would copy it, so a read would cost in proportion to all the keys read
     * before (hundreds of KiB per note) instead of to the document.
     */
    public static ObjectMapper idKeyed() {
        return IdKeyed.MAPPER;
    }

    /** A factory whose parsers keep no table of field names, for {@link #idKeyed} and its kin. */
    public static JsonFactory idKeyedFactory() {
        return JsonFactory.builder().disable(JsonFactory.Feature.CANONICALIZE_FIELD_NAMES).build();
    }

    private static ObjectMapper configure(ObjectMapper mapper) {
        return mapper.registerModule(new JavaTimeModule()).disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS);
    }

    /** The shared mapper, created on first use. Never reconfigure it. */
    public static ObjectMapper shared() {
        return Shared.MAPPER;
    }

    /** The shared mapper that indents its output. */
    public static ObjectMapper pretty() {
        return Shared.PRETTY;
    }

    private static final class IdKeyed {
        static final ObjectMapper MAPPER = configure(new ObjectMapper(idKeyedFactory()));
    }

    private static final class Shared {
        static final ObjectMapper MAPPER = mapper();
        static final ObjectMapper PRETTY = mapper().enable(SerializationFeature.INDENT_OUTPUT);
    }
}
