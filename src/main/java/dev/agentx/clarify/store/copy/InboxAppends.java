package dev.agentx.clarify.store.copy;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * A data dir's inbox as it was before deliveries were carried into it, so that they can be taken
 * out again: whether it was there, and the size of each of its files. Carrying deliveries only
 * appends to the inbox's journal and queue segments, or makes new ones.
 */
final class InboxAppends {
    private final Path inbox;
    private final boolean existed;
    private final Map<Path, Long> sizes;

    private InboxAppends(Path inbox, boolean existed, Map<Path, Long> sizes) {
        this.inbox = inbox;
        this.existed = existed;
        this.sizes = sizes;
    }

    /** The inbox {@code inbox} as it is now, before anything opens it. */
    static InboxAppends before(Path inbox) {
        boolean existed = Files.isDirectory(inbox);
        return new InboxAppends(inbox, existed, existed ? sizes(inbox) : Map.of());
    }

    private static Map<Path, Long> sizes(Path inbox) {
        Map<Path, Long> out = new HashMap<>();
        try (Stream<Path> files = Files.walk(inbox)) {
            for (Path p : files.filter(Files::isRegularFile).toList()) {
                out.put(p, Files.size(p));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + inbox + ": " + e.getMessage(), e);
        }
        return out;
    }

    /**
     * Takes what was carried into the inbox back out: the inbox removed if it was not there
     * before, else each file cut back to its size before and the files made since removed.
     */
    void takeBack() {
        try {
            if (!Files.exists(inbox)) {
                return;
            }
            List<Path> files;
            try (Stream<Path> walk = Files.walk(inbox)) {
                files = walk.sorted(Comparator.reverseOrder()).toList(); // a folder after what it holds
            }
            for (Path p : files) {
                Long size = sizes.get(p);
                if (!existed) {
                    Files.delete(p);
                } else if (Files.isRegularFile(p) && size == null) {
                    Files.delete(p);
                } else if (size != null && Files.size(p) > size) {
                    try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
                        ch.truncate(size);
                        ch.force(true);
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot take the deliveries carried into " + inbox + " out again: "
                    + e.getMessage(), e);
        }
    }
}
