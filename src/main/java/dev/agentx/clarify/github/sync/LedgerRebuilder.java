package dev.agentx.clarify.github.sync;

import dev.agentx.clarify.protocol.ClarificationId;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.ThreadEntry;
import dev.agentx.clarify.render.Marker;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Rebuilds an issue's ledger from the markers of the comments the app posted. Only comments whose
 * author is the app's bot login ({@code <app-slug>[bot]}, which no one else can post as) are
 * trusted; a marker in anyone else's comment is ignored and reported. Per record: the thread is
 * the markers' entries by their thread index (every index from 0 must be there); the record's
 * other fields come from the newest marker of the record (comments are listed oldest first; the
 * app renders every comment from the record as it then stands). Records are ordered by id.
 */
public final class LedgerRebuilder {
    private final String appLogin;

    public LedgerRebuilder(String appLogin) {
        this.appLogin = appLogin.toLowerCase(Locale.ROOT);
    }

    public Rebuild rebuild(int issue, List<IssueComment> comments) {
        List<String> ignored = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        Map<String, ClarificationRecord> headers = new TreeMap<>();
        Map<String, Map<Integer, ThreadEntry>> threads = new TreeMap<>();
        int used = 0;
        for (IssueComment c : comments) {
            boolean trusted = c.author().toLowerCase(Locale.ROOT).equals(appLogin);
            Optional<Marker> marker;
            try {
                marker = Marker.parse(c.body());
            } catch (IllegalArgumentException e) {
                if (trusted) {
                    problems.add("comment " + c.id() + ": " + e.getMessage());
                } else {
                    ignored.add("comment " + c.id() + " by " + c.author() + " (not the app)");
                }
                continue;
            }
            if (marker.isEmpty()) {
                continue;
            }
            if (!trusted) {
                ignored.add("comment " + c.id() + " by " + c.author() + " (not the app)");
                continue;
            }
            Marker m = marker.get();
            ClarificationId id;
            try {
                id = ClarificationId.parse(m.id());
            } catch (RuntimeException e) {
                problems.add("comment " + c.id() + ": marker id '" + m.id() + "' is not of the form CLR-<issue>-<seq>");
                continue;
            }
            if (id.issue() != issue) {
                problems.add("comment " + c.id() + ": marker of " + m.id() + " belongs to issue " + id.issue());
                continue;
            }
            used++;
            headers.put(m.id(), m.record());
            if (m.entry() != null) {
                ThreadEntry before = threads.computeIfAbsent(m.id(), k -> new TreeMap<>()).put(m.index(), m.entry());
                if (before != null && !before.equals(m.entry())) {
                    problems.add("comment " + c.id() + ": thread entry " + m.index() + " of " + m.id()
                            + " differs from an earlier comment's");
                }
            }
        }
        List<ClarificationRecord> records = new ArrayList<>();
        for (Map.Entry<String, ClarificationRecord> h : headers.entrySet()) {
            Map<Integer, ThreadEntry> entries = threads.getOrDefault(h.getKey(), Map.of());
            List<ThreadEntry> thread = new ArrayList<>();
            for (int i = 0; i < entries.size(); i++) {
                ThreadEntry e = entries.get(i);
                if (e == null) {
                    problems.add(h.getKey() + ": no comment carries thread entry " + i
                            + " (deleted, or not posted yet)");
                    break;
                }
                thread.add(e);
            }
            records.add(h.getValue().withThread(thread));
        }
        records.sort(Comparator.comparingInt(r -> r.clarificationId().seq()));
        Optional<Ledger> ledger = !problems.isEmpty() || records.isEmpty() ? Optional.empty()
                : Optional.of(new Ledger(issue, records));
        return new Rebuild(issue, ledger, used, ignored, problems);
    }
}
