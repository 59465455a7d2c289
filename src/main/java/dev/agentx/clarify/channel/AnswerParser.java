package dev.agentx.clarify.channel;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.files.JsonErrors;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.protocol.OptionsParser;
import dev.agentx.clarify.protocol.Shorten;
import dev.agentx.clarify.routing.Validation;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Reads what an automatic agent sent back (stdout of a command, body of an http response):
 * <ul>
 *   <li>a JSON object {@code {"answer": "...", "choice": 0}}: {@code choice} is the 0-based index into
 *       the request's {@code options}, or an option's text; either field may be left out (a choice
 *       alone answers with that option's text);</li>
 *   <li>{@code {"cannotAnswer": true, "reason": "..."}}, an empty answer, or (plain text) a first
 *       line {@code CANNOT_ANSWER} with an optional reason after it: no answer, the record stays
 *       pending and the attempt counts as a failure;</li>
 *   <li>{@code {"deferred": true, "note": "..."}}: the agent will answer later itself (by
 *       {@code agentx clarify answer}); not a failure;</li>
 *   <li>anything else that is not JSON (commands only): the answer as plain text; the engine maps
 *       a number or an option's text to the option.</li>
 * </ul>
 */
public final class AnswerParser {
    public static final String CANNOT_ANSWER = "CANNOT_ANSWER";

    private static final ObjectMapper MAPPER = JsonSupport.mapper();

    private AnswerParser() {
    }

    /**
     * @param output what the agent sent, decoded as UTF-8
     * @param jsonOnly true for http (the body must be a JSON object)
     * @param who for messages, e.g. "architect's command agent"
     * @param channel the channel name recorded with the answer
     */
    public static Delivery parse(String output, boolean jsonOnly, List<String> options, String who, String channel) {
        String text = output == null ? "" : output.strip();
        if (text.isEmpty()) {
            return new Delivery.Failed(who + " gave an empty answer (counts as no answer)");
        }
        if (text.startsWith("{")) {
            return json(text, options, who, channel);
        }
        if (jsonOnly) {
            return new Delivery.Failed(who + " did not answer with a JSON object: " + snippet(text));
        }
        String firstLine = text.lines().findFirst().orElse("").strip();
        if (firstLine.toUpperCase(Locale.ROOT).startsWith(CANNOT_ANSWER)) {
            String reason = text.substring(text.toUpperCase(Locale.ROOT).indexOf(CANNOT_ANSWER) + CANNOT_ANSWER.length())
                    .replaceFirst("^[\\s:-]+", "").strip();
            return cannot(who, reason);
        }
        return answered(text, null, who, channel);
    }

    private static Delivery json(String text, List<String> options, String who, String channel) {
        JsonNode node;
        try {
            node = MAPPER.readTree(text);
        } catch (JsonProcessingException e) {
            return new Delivery.Failed(who + " sent malformed JSON: " + JsonErrors.describe(e));
        }
        if (node == null || !node.isObject()) {
            return new Delivery.Failed(who + " did not answer with a JSON object: " + snippet(text));
        }
        if (node.path("cannotAnswer").asBoolean(false)) {
            return cannot(who, node.path("reason").asText(""));
        }
        if (node.path("deferred").asBoolean(false)) {
            return new Delivery.Deferred(who + " will answer later" + (node.hasNonNull("note")
                    ? ": " + node.get("note").asText() : ""));
        }
        JsonNode answer = node.get("answer");
        if (answer != null && !answer.isNull() && !answer.isTextual()) {
            return new Delivery.Failed(who + " sent \"answer\" as " + answer.getNodeType().name().toLowerCase(Locale.ROOT)
                    + "; it must be a string");
        }
        String body = answer == null || answer.isNull() ? "" : answer.asText().strip();
        Integer choice = null;
        JsonNode c = node.get("choice");
        if (c != null && !c.isNull()) {
            if (c.isIntegralNumber()) {
                int i = c.canConvertToInt() ? c.intValue() : -1; // a number past int is no index, never wrapped
                if (i < 0 || i >= options.size()) {
                    return new Delivery.Failed(who + " chose option index " + c.asText() + ", but the question has "
                            + (options.isEmpty() ? "no options" : options.size() + " options (indexes 0 to "
                            + (options.size() - 1) + ")"));
                }
                choice = i;
            } else if (c.isTextual()) {
                Optional<Integer> picked = OptionsParser.choose(options, c.asText());
                if (picked.isEmpty()) {
                    return new Delivery.Failed(who + " chose \"" + snippet(c.asText()) + "\", which is none of the options "
                            + options);
                }
                choice = picked.get();
            } else {
                return new Delivery.Failed(who + " sent \"choice\" as " + c.getNodeType().name().toLowerCase(Locale.ROOT)
                        + "; it must be a 0-based option index or an option's text");
            }
        }
        if (body.isEmpty() && choice == null) {
            return new Delivery.Failed(who + " gave an empty answer (counts as no answer)");
        }
        if (body.isEmpty()) {
            body = OptionsParser.label(options.get(choice));
        }
        return answered(body, choice, who, channel);
    }

    private static Delivery answered(String body, Integer choice, String who, String channel) {
        int n = body.codePointCount(0, body.length());
        if (n > Validation.MAX_TEXT) {
            return new Delivery.Failed(who + " answered with " + n + " characters; an answer may have at most "
                    + Validation.MAX_TEXT);
        }
        return new Delivery.Answered(body, choice, channel);
    }

    private static Delivery cannot(String who, String reason) {
        return new Delivery.Failed(who + " cannot answer" + (reason == null || reason.isBlank() ? "" : ": "
                + snippet(reason.strip())));
    }

    /** The first 200 characters on one line, for error messages. */
    static String snippet(String s) {
        String flat = s.strip().replaceAll("\\s+", " ");
        return Shorten.to(flat, 200);
    }

    /** The last 200 characters on one line: the end of a program's diagnostics, where its cause is. */
    static String tail(String s) {
        String flat = s.strip().replaceAll("\\s+", " ");
        return Shorten.toEnd(flat, 200);
    }
}
