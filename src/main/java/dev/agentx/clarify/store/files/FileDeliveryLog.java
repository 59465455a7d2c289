package dev.agentx.clarify.store.files;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.agentx.clarify.files.IsoInstant;
import dev.agentx.clarify.files.Journal;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What the inbox of a data dir says of the deliveries it received, read without changing a file,
 * so it can be looked at while the server runs: queued and not done yet (acknowledged), done
 * (processed), kept in {@code failed/} (failed); those the recovery pass asked GitHub for are
 * marked recovered.
 */
public final class FileDeliveryLog {
    /** One delivery: {@code event} and {@code receivedAt} are null when only its id is still kept. */
    public record Entry(String id, String event, Instant receivedAt, Instant doneAt, String state, boolean recovered) {
    }

    private FileDeliveryLog() {
    }

    /** The deliveries of the inbox under {@code inbox}, newest first; {@code recovered} are GUIDs asked for again. */
    public static List<Entry> read(Path inbox, Set<String> recovered) {
        ObjectMapper json = new ObjectMapper();
        Map<String, Instant> done = new HashMap<>();
        for (byte[] r : Journal.readOnly(inbox.resolve("journal"))) {
            try {
                JsonNode n = json.readTree(r);
                if ("done".equals(n.path("op").asText()) && n.hasNonNull("id")) {
                    done.put(n.get("id").asText(), n.hasNonNull("at") ? IsoInstant.parse(n.get("at").asText()) : null);
                }
            } catch (IOException | RuntimeException e) {
                // a record this reader cannot make out says nothing of a delivery's state
            }
        }
        Map<String, Entry> out = new HashMap<>();
        for (Path segment : files(inbox.resolve("queue"), "*.log")) {
            for (byte[] r : Journal.readOnly(segment)) {
                try {
                    DeliveryFile.Header h = DeliveryFile.decodeHeader(r);
                    out.put(h.id(), new Entry(h.id(), h.event(), h.receivedAt(), done.get(h.id()),
                            done.containsKey(h.id()) ? "processed" : "acknowledged", recovered.contains(h.id())));
                } catch (IOException e) {
                    // not a delivery record
                }
            }
        }
        done.forEach((id, at) -> out.putIfAbsent(id, new Entry(id, null, null, at, "processed", recovered.contains(id))));
        for (Path f : files(inbox.resolve("failed"), "*-*.{json,txt}")) {
            String name = f.getFileName().toString();
            String id = name.substring(name.indexOf('-') + 1, name.lastIndexOf('.'));
            Entry known = out.get(id);
            out.put(id, new Entry(id, known == null ? null : known.event(), known == null ? null : known.receivedAt(),
                    done.get(id), "failed", recovered.contains(id)));
        }
        List<Entry> list = new ArrayList<>(out.values());
        list.sort(Comparator.comparing((Entry e) -> e.receivedAt() != null ? e.receivedAt()
                : e.doneAt() != null ? e.doneAt() : Instant.EPOCH).reversed());
        return list;
    }

    private static List<Path> files(Path dir, String glob) {
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir, glob)) {
            s.forEach(out::add);
        } catch (NoSuchFileException e) {
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + dir + ": " + e.getMessage(), e);
        }
        out.sort(null);
        return out;
    }
}
