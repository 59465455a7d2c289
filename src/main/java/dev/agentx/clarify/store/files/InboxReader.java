package dev.agentx.clarify.store.files;

import dev.agentx.clarify.files.Journal;
import dev.agentx.clarify.store.Acknowledged;
import dev.agentx.clarify.store.DeliveryQueue.Progress;
import dev.agentx.clarify.store.InboundDelivery;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The inbox under a folder read without changing a file (as {@link FileDeliveryLog} reads it), as a
 * server would find it at its start ({@link FileDeliveryQueue}'s rules): for {@code agentx store
 * copy}, which carries what it acknowledged into another store.
 */
final class InboxReader {
    private InboxReader() {
    }

    /**
     * The deliveries queued under {@code dir} and not done with, in the order received, with their
     * failed attempts, and the ids done with that its journal keeps. Nothing when there is no inbox.
     *
     * @throws UncheckedIOException when a file of it cannot be read whole (a damaged record that is
     *     not the last one, a record that is not the inbox's)
     */
    static Acknowledged acknowledged(Path dir) {
        Map<Long, Progress> progress = new HashMap<>();
        TreeMap<String, Instant> done = new TreeMap<>();
        Path journalFile = dir.resolve("journal");
        try {
            InboxJournal.readAll(Journal.readOnly(journalFile), r -> {
                if (!InboxJournal.replay(r, progress, done::put)) {
                    throw new UncheckedIOException(new IOException("the inbox journal " + journalFile
                            + " has a record '" + r.op() + "' this agentx does not know"));
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the inbox journal " + journalFile + ": " + e.getMessage(), e);
        }
        TreeMap<Long, Acknowledged.Waiting> waiting = new TreeMap<>();
        Set<String> queuedIds = new HashSet<>();
        List<Path> segments;
        try {
            segments = QueueSegments.files(dir.resolve("queue"));
        } catch (NoSuchFileException e) {
            segments = List.of();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + dir.resolve("queue") + ": " + e.getMessage(), e);
        }
        for (Path segment : segments) {
            for (byte[] record : Journal.readOnly(segment)) {
                DeliveryFile.Header h;
                InboundDelivery d;
                try {
                    h = DeliveryFile.decodeHeader(record);
                    d = DeliveryFile.decode(record);
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot read the inbox queue segment " + segment + ": "
                            + e.getMessage(), e);
                }
                if (done.containsKey(h.id()) || !queuedIds.add(h.id())) {
                    continue; // done with (a crash undid its segment's deletion), or queued twice: as a start does
                }
                Progress p = progress.getOrDefault(h.seq(), Progress.NONE);
                waiting.put(h.seq(), new Acknowledged.Waiting(h.id(), h.event(), h.receivedAt(),
                        h.key() == null ? "" : h.key(), d.body(), p.attempts(), p.notBefore()));
            }
        }
        return new Acknowledged(List.copyOf(waiting.values()), done);
    }
}
