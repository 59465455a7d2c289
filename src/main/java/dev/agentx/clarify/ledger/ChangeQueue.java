package dev.agentx.clarify.ledger;

import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.files.IoErrors;
import dev.agentx.clarify.files.RuntimeFolder;
import dev.agentx.clarify.lock.ProcessIdentity;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.LoggerFactory;

/**
 * The changes waiting for an issue's lock, as files in {@code <state>/.runtime/changes/} (see
 * RuntimeFolder), so
 * that whichever process gets the lock carries out all of them in one ledger write (see
 * FileLedgerStore#submit). One request, named {@code <issue>-<millis>-<pid>-<seq>} (names sort in
 * order of arrival), moves through three files:
 * <ul>
 *   <li>{@code NAME.req}: waiting. Its submitter may withdraw it (delete it) while it is;</li>
 *   <li>{@code NAME.taken}: claimed by the lock's holder (a rename: a withdrawal and a claim
 *       cannot both succeed);</li>
 *   <li>{@code NAME.out}: the reply, written after the ledger; the submitter reads and removes it.</li>
 * </ul>
 * Requests and replies are written under a temporary name and renamed into place, never fsynced:
 * a request is not acknowledged until its reply is read, and a lost reply is recovered from the
 * ledger (the change finds itself there by its key). A request whose process is gone is removed
 * unread: nobody waits for its reply.
 */
final class ChangeQueue {
    private static final String WAITING = ".req";
    private static final String TAKEN = ".taken";
    private static final String REPLY = ".out";
    /** A temporary file or reply older than this was left by a process that died. */
    private static final Duration ABANDONED = Duration.ofMinutes(10);
    private static final AtomicLong SEQUENCE = new AtomicLong();

    private final Path runtime;
    private final Path dir;
    private final ProcessIdentity self;
    private final Clock clock;

    /** @param runtime the state folder's runtime folder */
    ChangeQueue(Path runtime, ProcessIdentity self, Clock clock) {
        this.runtime = runtime;
        this.dir = runtime.resolve(RuntimeFolder.CHANGES);
        this.self = self;
        this.clock = clock;
    }

    Path directory() {
        return dir;
    }

    /** A request of this process. */
    record Request(String name) {
    }

    /**
     * A request claimed by the lock's holder: its name, the change as its submitter wrote it, and
     * the port of its submitter's doorbell (null: none, or on another host).
     */
    record Claimed(String name, byte[] change, Integer bell) {
    }

    /** What the holder answers: the result as the codec wrote it, or a refusal. */
    sealed interface Reply {
    }

    record Done(byte[] result) implements Reply {
    }

    record Refused(ErrorCode code, String message) implements Reply {
        ClarifyException exception() {
            return new ClarifyException(code, message);
        }
    }

    /** Puts {@code change} in the queue of {@code issue}; {@code bell} is the port of the submitter's doorbell. */
    Request enqueue(int issue, byte[] change, int bell) {
        // the time at a fixed width, so that names sort by arrival; by hand, not String.format (a
        // hot path under contention, as in ClarificationId)
        String millis = Long.toString(clock.millis());
        String name = issue + "-" + "0".repeat(Math.max(0, 13 - millis.length())) + millis + "-" + self.pid() + "-"
                + SEQUENCE.incrementAndGet();
        Instant start = self.processStart();
        byte[] header = (self.host() + " " + self.pid() + " " + (start == null ? "-" : start.toEpochMilli()) + " " + bell + "\n")
                .getBytes(StandardCharsets.UTF_8);
        byte[] content = Arrays.copyOf(header, header.length + change.length);
        System.arraycopy(change, 0, content, header.length, change.length);
        RuntimeFolder.enter(runtime);
        publish(dir.resolve(name + WAITING), content);
        return new Request(name);
    }

    /** The reply to {@code r} if a holder wrote one (then removed: it is read once). */
    Optional<Reply> takeReply(Request r) {
        Path f = dir.resolve(r.name() + REPLY);
        if (!f.toFile().exists()) {
            return Optional.empty(); // the usual answer while waiting, told without an exception
        }
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(f);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + f + ": " + IoErrors.why(e), e);
        }
        delete(f);
        return Optional.of(decodeReply(f, bytes));
    }

    /** Takes {@code r} back if no holder claimed it: true if it will never be carried out. */
    boolean withdraw(Request r) {
        try {
            boolean withdrawn = Files.deleteIfExists(dir.resolve(r.name() + WAITING));
            if (withdrawn) {
                try {
                    Files.delete(dir); // a queue left empty is no queue: nothing of it stays on disk
                } catch (IOException e) {
                    // others wait in it
                }
            }
            return withdrawn;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot withdraw " + r.name() + " from " + dir + ": " + IoErrors.why(e), e);
        }
    }

    /**
     * Claims every request of {@code issue} that waits, in order of arrival, with those a holder
     * claimed and died before replying to. Call holding the issue's lock. Requests of processes that
     * are gone are removed, and so are what dead processes left half-written or never read.
     */
    List<Claimed> claim(int issue) {
        String[] names = dir.toFile().list();
        if (names == null) {
            return List.of();
        }
        Arrays.sort(names);
        String prefix = issue + "-";
        List<Claimed> out = new ArrayList<>();
        for (String name : names) {
            if (name.startsWith(".") || name.endsWith(REPLY)) {
                removeIfAbandoned(dir.resolve(name));
                continue;
            }
            if (!name.startsWith(prefix)) {
                continue;
            }
            String base;
            if (name.endsWith(WAITING)) {
                base = name.substring(0, name.length() - WAITING.length());
                try {
                    Files.move(dir.resolve(name), dir.resolve(base + TAKEN), StandardCopyOption.ATOMIC_MOVE);
                } catch (NoSuchFileException e) {
                    continue; // withdrawn meanwhile
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot claim " + name + " in " + dir + ": " + IoErrors.why(e), e);
                }
            } else if (name.endsWith(TAKEN)) {
                base = name.substring(0, name.length() - TAKEN.length());
                if (Files.exists(dir.resolve(base + REPLY))) {
                    delete(dir.resolve(name)); // replied to by a holder that died before it removed the claim
                    continue;
                }
            } else {
                continue;
            }
            Path taken = dir.resolve(base + TAKEN);
            byte[] bytes;
            try {
                bytes = Files.readAllBytes(taken);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read " + taken + ": " + IoErrors.why(e), e);
            }
            int eol = indexOf(bytes, (byte) '\n');
            String[] header = eol < 0 ? new String[0] : new String(bytes, 0, eol, StandardCharsets.UTF_8).split(" ");
            if (!fresh(base) && !submitterAlive(header)) {
                delete(taken);
                continue;
            }
            out.add(new Claimed(base, Arrays.copyOfRange(bytes, eol + 1, bytes.length), bellOf(header)));
        }
        return out;
    }

    /** Answers a claimed request and removes the claim: its submitter reads the reply when its turn comes. */
    void reply(Claimed c, Reply reply) {
        byte[] content;
        if (reply instanceof Done d) {
            byte[] head = "done\n".getBytes(StandardCharsets.UTF_8);
            content = Arrays.copyOf(head, head.length + d.result().length);
            System.arraycopy(d.result(), 0, content, head.length, d.result().length);
        } else {
            Refused r = (Refused) reply;
            content = ("refused " + r.code().name() + "\n" + r.message()).getBytes(StandardCharsets.UTF_8);
        }
        publish(dir.resolve(c.name() + REPLY), content);
        delete(dir.resolve(c.name() + TAKEN));
    }

    /** Removes the holder's own claim (its result goes straight back to its caller). */
    void finish(Request mine) {
        delete(dir.resolve(mine.name() + TAKEN));
    }

    private static Reply decodeReply(Path f, byte[] bytes) {
        int eol = indexOf(bytes, (byte) '\n');
        String head = new String(bytes, 0, eol < 0 ? bytes.length : eol, StandardCharsets.UTF_8);
        byte[] rest = eol < 0 ? new byte[0] : Arrays.copyOfRange(bytes, eol + 1, bytes.length);
        if (head.equals("done")) {
            return new Done(rest);
        }
        if (head.startsWith("refused ")) {
            try {
                return new Refused(ErrorCode.valueOf(head.substring("refused ".length())),
                        new String(rest, StandardCharsets.UTF_8));
            } catch (IllegalArgumentException e) {
                // an error code this version does not know: reported as it is
            }
        }
        return new Refused(ErrorCode.INTERNAL, "Unreadable reply " + f + ": '" + head + "'.");
    }

    /**
     * Whether the request named {@code base} was made less than {@link #FRESH} ago: its submitter
     * is taken to be alive without asking the system (which costs a look at /proc per request,
     * while a holder carries out a batch). A submitter that died that young lost nothing: its
     * change is carried out as if it had died just after its reply.
     */
    private boolean fresh(String base) {
        String[] f = base.split("-");
        try {
            return f.length == 4 && clock.millis() - Long.parseLong(f[1]) < FRESH.toMillis();
        } catch (NumberFormatException e) {
            return false;
        }
    }

    private static final Duration FRESH = Duration.ofSeconds(2);

    /**
     * The doorbell of the submitter whose request for {@code issue} has waited longest, of those
     * on this host (empty if none waits): a holder that lets go rings it, and that submitter takes
     * the lock next and carries out every request waiting then, its own and the others' (see
     * FileLedgerStore#submit). The others are not woken: each would look, find the lock taken and
     * sleep again, and with many waiters on few cores those looks took the cores from the one
     * that holds the lock. A submitter that hears no bell looks again after a while anyway.
     */
    List<Integer> nextBell(int issue) {
        String[] names = dir.toFile().list();
        if (names == null) {
            return List.of();
        }
        String prefix = issue + "-";
        List<String> waiting = new ArrayList<>();
        for (String name : names) {
            if (name.startsWith(prefix) && name.endsWith(WAITING)) {
                waiting.add(name);
            }
        }
        waiting.sort(null); // names sort in order of arrival
        for (String name : waiting) {
            try {
                byte[] bytes = Files.readAllBytes(dir.resolve(name));
                int eol = indexOf(bytes, (byte) '\n');
                Integer bell = eol < 0 ? null : bellOf(new String(bytes, 0, eol, StandardCharsets.UTF_8).split(" "));
                if (bell != null) {
                    return List.of(bell);
                }
            } catch (IOException e) {
                // claimed or withdrawn meanwhile
            }
        }
        return List.of();
    }

    /** The doorbell port in a request's header {@code host pid start bell}, if its submitter runs on this host. */
    private Integer bellOf(String[] header) {
        if (header.length != 4 || !header[0].equals(self.host())) {
            return null;
        }
        try {
            return Integer.valueOf(header[3]);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** Whether the process that wrote a request (its header {@code host pid start bell}) may still wait for its reply. */
    private boolean submitterAlive(String[] f) {
        if (f.length != 4) {
            return false;
        }
        if (!f[0].equals(self.host())) {
            return true; // another host's process (a shared folder): its liveness cannot be told
        }
        try {
            long pid = Long.parseLong(f[1]);
            Instant start = f[2].equals("-") ? null : Instant.ofEpochMilli(Long.parseLong(f[2]));
            return pid == self.pid() || self.isAlive(pid, start);
        } catch (NumberFormatException e) {
            return false;
        }
    }

    private void publish(Path target, byte[] content) {
        Path temp;
        try {
            temp = AtomicFiles.prepare(target, content, false);
        } catch (UncheckedIOException e) {
            throw new UncheckedIOException("cannot write " + target + ": " + e.getMessage(), e.getCause());
        }
        try {
            AtomicFiles.commit(temp, target, false);
        } finally {
            AtomicFiles.discard(temp);
        }
    }

    private void removeIfAbandoned(Path f) {
        try {
            if (Files.getLastModifiedTime(f).toInstant().isBefore(clock.instant().minus(ABANDONED))) {
                Files.deleteIfExists(f);
                LoggerFactory.getLogger(ChangeQueue.class).info("removed {}: left by a process that is gone", f);
            }
        } catch (IOException e) {
            // gone already, or looked at again by the next holder
        }
    }

    private static void delete(Path f) {
        try {
            Files.deleteIfExists(f);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot remove " + f + ": " + IoErrors.why(e), e);
        }
    }

    private static int indexOf(byte[] bytes, byte b) {
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == b) {
                return i;
            }
        }
        return -1;
    }
}
