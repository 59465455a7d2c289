package dev.agentx.clarify.mcp;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.ErrorCode;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How the tools' results speak of clarifications: a record as the call leaves it (a line for the
 * model, its notes, the record as data), a record in brief, and the warnings of a scan that met
 * damaged ledgers.
 */
final class RecordResults {
    private static final TypeReference<LinkedHashMap<String, Object>> MAP = new TypeReference<>() {
    };

    private RecordResults() {
    }

    /**
     * The result of a call about one record: {@code line} and the notes as text; the record's id,
     * issue, status, rounds, notes, {@code extra} and the record itself as data.
     */
    static ToolResult of(int issue, ClarificationRecord r, String line, List<String> notes, Map<String, Object> extra) {
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("id", r.id());
        data.put("issueNumber", issue);
        data.put("status", r.status().wire());
        data.put("round", r.round());
        data.put("maxRounds", r.maxRounds());
        data.put("blocking", r.blocking());
        data.put("notes", notes);
        data.putAll(extra);
        data.put("clarification", data(r));
        StringBuilder b = new StringBuilder(line.stripTrailing());
        if (r.codeLine() != null) {
            b.append("\nasked on the code: ").append(r.codeLine().describe());
        }
        for (String n : notes) {
            b.append("\nnote: ").append(n);
        }
        return ToolResult.ok(b.toString(), data);
    }

    /** A value (a record, a status) as the JSON object its JSON form is. */
    static Map<String, Object> data(Object value) {
        return JsonSupport.shared().convertValue(value, MAP);
    }

    /** A record in brief, with the role it waits on when given. */
    static Map<String, Object> brief(int issue, ClarificationRecord r, String waitsOn) {
        Map<String, Object> n = new LinkedHashMap<>();
        n.put("id", r.id());
        n.put("issueNumber", issue);
        n.put("from", r.from());
        n.put("to", r.to());
        n.put("topic", r.topic());
        n.put("status", r.status().wire());
        n.put("round", r.round());
        n.put("blocking", r.blocking());
        if (r.codeLine() != null) {
            n.put("codeLine", data(r.codeLine()));
        }
        if (waitsOn != null) {
            n.put("waitsOn", waitsOn);
        }
        return n;
    }

    /** Puts a scan's problems, each a damaged ledger, as {@code warnings} into {@code data}. */
    static void warnings(Map<String, Object> data, List<String> problems) {
        data.put("warnings", problems.stream().map(p -> ErrorCode.LEDGER_DAMAGED.name() + ": " + p).toList());
    }

    /** {@code text} followed by a warning line for each of a scan's problems. */
    static String withWarnings(String text, List<String> problems) {
        StringBuilder b = new StringBuilder(text);
        for (String p : problems) {
            b.append("\nwarning: ").append(ErrorCode.LEDGER_DAMAGED.name()).append(": ").append(p);
        }
        return b.toString();
    }
}
