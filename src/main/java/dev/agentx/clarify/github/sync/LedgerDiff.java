package dev.agentx.clarify.github.sync;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Ledger;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Compares two ledgers of an issue record by record and field by field (thread entries by index). */
public final class LedgerDiff {
    private final ObjectMapper json = JsonSupport.mapper();

    public List<Difference> diff(Ledger local, Ledger github) {
        Map<String, ClarificationRecord> mine = byId(local);
        Map<String, ClarificationRecord> theirs = byId(github);
        Set<String> ids = new LinkedHashSet<>(mine.keySet());
        ids.addAll(theirs.keySet());
        List<Difference> out = new ArrayList<>();
        for (String id : ids) {
            ClarificationRecord a = mine.get(id);
            ClarificationRecord b = theirs.get(id);
            if (a == null || b == null) {
                out.add(new Difference(id, "*", a == null ? null : "present", b == null ? null : "present"));
                continue;
            }
            Map<String, String> fa = flatten(a);
            Map<String, String> fb = flatten(b);
            Set<String> fields = new LinkedHashSet<>(fa.keySet());
            fields.addAll(fb.keySet());
            for (String f : fields) {
                String va = fa.get(f);
                String vb = fb.get(f);
                if (va == null ? vb != null : !va.equals(vb)) {
                    out.add(new Difference(id, f, va, vb));
                }
            }
        }
        return out;
    }

    /**
     * What {@code local} has that {@code github} does not show, when {@code local} is ahead of it:
     * one line per record, naming the thread entries (or the whole record) GitHub lacks. Ahead means
     * every record GitHub shows is in {@code local}, and each record is either equal, or absent on
     * GitHub, or its GitHub thread is a strict prefix of the local one with the fields that are set
     * at creation equal (the rest: status, round, SLA, resolution, change with later entries). Empty
     * when {@code local} is not ahead (equal, behind, or different otherwise).
     */
    public List<String> ahead(Ledger local, Ledger github) {
        Map<String, ClarificationRecord> mine = byId(local);
        Map<String, ClarificationRecord> theirs = byId(github);
        if (local == null || !mine.keySet().containsAll(theirs.keySet())) {
            return List.of();
        }
        List<String> out = new ArrayList<>();
        for (ClarificationRecord a : mine.values()) {
            ClarificationRecord b = theirs.get(a.id());
            if (b == null) {
                out.add(a.id() + ": the whole record (" + a.thread().size() + " thread entr"
                        + (a.thread().size() == 1 ? "y" : "ies") + ") is not on GitHub");
                continue;
            }
            if (a.equals(b)) {
                continue;
            }
            int shown = b.thread().size();
            boolean prefix = shown < a.thread().size() && a.thread().subList(0, shown).equals(b.thread());
            if (!prefix || !sameAtCreation(a, b)) {
                return List.of();
            }
            out.add(a.id() + ": thread entr" + (a.thread().size() - shown == 1 ? "y " + shown
                    : "ies " + shown + " to " + (a.thread().size() - 1)) + " not on GitHub");
        }
        return out;
    }

    /** The fields no later thread entry changes. */
    private static boolean sameAtCreation(ClarificationRecord a, ClarificationRecord b) {
        return a.from().equals(b.from()) && a.to().equals(b.to()) && a.topic().equals(b.topic())
                && a.blocking() == b.blocking() && a.maxRounds() == b.maxRounds() && a.created().equals(b.created())
                && a.options().equals(b.options()) && a.effectiveAutonomy() == b.effectiveAutonomy();
    }

    private static Map<String, ClarificationRecord> byId(Ledger ledger) {
        Map<String, ClarificationRecord> out = new LinkedHashMap<>();
        if (ledger != null) {
            ledger.clarifications().forEach(r -> out.put(r.id(), r));
        }
        return out;
    }

    private Map<String, String> flatten(ClarificationRecord r) {
        Map<String, String> out = new LinkedHashMap<>();
        flatten("", json.valueToTree(r), out);
        return out;
    }

    private static void flatten(String path, JsonNode n, Map<String, String> out) {
        if (n.isObject()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                flatten(path.isEmpty() ? e.getKey() : path + "." + e.getKey(), e.getValue(), out);
            }
        } else if (n.isArray() && !path.equals("options")) {
            out.put(path + ".size", String.valueOf(n.size()));
            for (int i = 0; i < n.size(); i++) {
                flatten(path + "[" + i + "]", n.get(i), out);
            }
        } else if (!n.isNull()) {
            out.put(path, n.toString());
        }
    }
}
