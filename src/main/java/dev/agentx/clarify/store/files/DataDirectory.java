package dev.agentx.clarify.store.files;

import dev.agentx.clarify.files.AtomicFiles;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;

/**
 * The server's data folder ({@code AGENTX_DATA_DIR}) as the file store: each repository's state
 * under {@code repos/<id>/.agentx/state/}, by GitHub's id of the repository (which a rename or a
 * transfer does not change), with the name it was last seen under in {@code repos/<id>/repository.json}
 * ({@link FileRepositoryRecords}).
 */
public final class DataDirectory {
    private static final String PART = "[A-Za-z0-9][A-Za-z0-9._-]{0,99}";
    /** A state key: a GitHub repository id in decimal. */
    private static final String KEY = "[1-9][0-9]{0,18}";
    /**
     * The file of the recovery pass: where it stopped asking GitHub for missed deliveries and what
     * it asked for (on PostgreSQL the note {@code Notes.RECOVERY}).
     */
    public static final String RECOVERY = "recovery.json";

    private final Path dir;
    private final LockManager locks;

    public DataDirectory(Path dir, LockManager locks) {
        this.dir = dir;
        this.locks = locks;
    }

    public Path path() {
        return dir;
    }

    /** {@link #RECOVERY} in this data dir. */
    public Path recoveryFile() {
        return dir.resolve(RECOVERY);
    }

    /** The key (GitHub's id) of each repository that has a state folder, in numeric order. */
    public List<String> repositories() {
        Path repos = dir.resolve("repos");
        List<String> out = new ArrayList<>();
        if (!Files.isDirectory(repos)) {
            return out;
        }
        try (Stream<Path> keys = Files.list(repos)) {
            for (Path key : keys.filter(Files::isDirectory).toList()) {
                String name = key.getFileName().toString();
                if (isKey(name) && Files.isDirectory(key.resolve(".agentx").resolve("state"))) {
                    out.add(name);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + repos + ": " + e.getMessage(), e);
        }
        out.sort(java.util.Comparator.comparingLong(Long::parseLong));
        return out;
    }

    /** Whether {@code key} is a state key: a GitHub repository id in decimal. */
    public static boolean isKey(String key) {
        return key.matches(KEY);
    }

    /** The records of which repository each key is, under which name ({@code repos/<id>/repository.json}). */
    public FileRepositoryRecords records() {
        return new FileRepositoryRecords(dir);
    }

    /** Whether {@code repo} is {@code owner/name} with names GitHub allows. */
    public static boolean isRepository(String repo) {
        int slash = repo.indexOf('/');
        return slash > 0 && repo.substring(0, slash).matches(PART) && repo.substring(slash + 1).matches(PART)
                && !repo.endsWith(".");
    }

    /**
     * Holds the data folder for one server until closed: an OS lock on {@code server.lock} in it,
     * which the kernel releases when the process ends however it ends, so no stale lock is left.
     * A second {@code agentx serve} on the same folder (two processes would corrupt its journals)
     * fails to start, naming the process that holds it.
     */
    public static AutoCloseable lockForServer(Path dir) {
        return lock(dir, "agentx serve", holder -> "AGENTX_DATA_DIR " + dir + " is in use by " + holder + ": one "
                + "server per data dir. Stop that one first; to run replicas, give each its own data dir on one "
                + "database (docs/storage.md).");
    }

    /**
     * Holds the data folder {@code dir} for {@code agentx store copy} until closed, as a server
     * does: a copy of a folder a running server changes would not be one state, and a server
     * started on it meanwhile would find a half-written copy. Refused while a server holds it.
     */
    public static AutoCloseable lockForCopy(Path dir) {
        return lock(dir, "agentx store copy", holder -> "files:" + dir + " is in use by " + holder + ": stop it "
                + "first, so that the copy is of a state that nothing changes meanwhile.");
    }

    /**
     * Holds the data folder {@code dir} for {@code agentx sync --write} until closed, as a server
     * does: a server running on it may still have comments to post in its outbox, which the
     * ledgers rebuilt from GitHub lack, and would go on from ledgers replaced under it. Refused
     * while a server holds it.
     */
    public static AutoCloseable lockForSync(Path dir) {
        return lock(dir, "agentx sync", holder -> "AGENTX_DATA_DIR " + dir + " is in use by " + holder + ": stop it "
                + "first; nothing was written. A running server may still hold comments to post that GitHub does "
                + "not show yet, and 'agentx sync --write' would replace ledgers under it.");
    }

    /**
     * The lock of {@link #lockForServer}, held by the command {@code by} (written into the lock
     * file for whoever is refused); {@code inUse} makes the refusal from the holder, such as
     * "agentx serve (pid 4242)".
     */
    private static AutoCloseable lock(Path dir, String by, java.util.function.Function<String, String> inUse) {
        Path file = dir.resolve("server.lock");
        FileChannel channel;
        try {
            Files.createDirectories(dir);
            channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open " + file + ": " + e.getMessage(), e);
        }
        FileLock lock;
        try {
            lock = channel.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null; // held by this process already
        } catch (IOException e) {
            closeQuietly(channel);
            throw new UncheckedIOException("cannot lock " + file + ": " + e.getMessage(), e);
        }
        if (lock == null) {
            String holder;
            try {
                holder = Files.readString(file, StandardCharsets.UTF_8).strip();
            } catch (IOException e) {
                holder = "";
            }
            closeQuietly(channel);
            throw new ClarifyException(ErrorCode.USAGE, inUse.apply(holder.isEmpty() ? "another agentx process"
                    : holder));
        }
        try {
            channel.truncate(0);
            channel.write(java.nio.ByteBuffer.wrap((by + " (pid " + ProcessHandle.current().pid() + ")\n")
                    .getBytes(StandardCharsets.UTF_8)), 0);
        } catch (IOException e) {
            // only the message a second server would print is missing
        }
        FileLock held = lock;
        return () -> {
            try {
                held.release();
            } finally {
                channel.close();
            }
        };
    }

    private static void closeQuietly(FileChannel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            // nothing was held
        }
    }

    /** The name {@link #replicaName} made at the server's first start, if it has started here; nothing is written. */
    public java.util.Optional<String> existingReplicaName() {
        Path file = dir.resolve("replica");
        try {
            String name = Files.isRegularFile(file) ? Files.readString(file, StandardCharsets.UTF_8).strip() : "";
            return name.isEmpty() ? java.util.Optional.empty() : java.util.Optional.of(name);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * This server's name among replicas that share a database: the host's name and a random
     * suffix, made at the first start and kept in {@code replica} in the data folder, so a
     * restart on the same folder (whose inbox holds the deliveries it claimed) is the same replica.
     */
    public String replicaName() {
        Path file = dir.resolve("replica");
        try {
            if (Files.exists(file)) {
                String name = Files.readString(file, StandardCharsets.UTF_8).strip();
                if (!name.isEmpty()) {
                    return name;
                }
            }
            String host;
            try {
                host = InetAddress.getLocalHost().getHostName();
            } catch (IOException e) {
                host = "agentx";
            }
            byte[] suffix = new byte[3];
            new SecureRandom().nextBytes(suffix);
            String name = host.replaceAll("[^A-Za-z0-9._-]", "-") + "-" + HexFormat.of().formatHex(suffix);
            AtomicFiles.write(file, (name + "\n").getBytes(StandardCharsets.UTF_8));
            return name;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read or write " + file + ": " + e.getMessage(), e);
        }
    }

    /** The state of the repository with key {@code key} (its folders are made on the first write). */
    public FileRepositoryState repository(String key) {
        return new FileRepositoryState(stateDirOf(key), locks);
    }

    /** {@code repos/<key>/.agentx/state} of the repository with key {@code key}: where its state files are. */
    public Path stateDirOf(String key) {
        if (!isKey(key)) {
            throw new IllegalArgumentException("not a repository's state key (GitHub's id of it): '" + key + "'");
        }
        return dir.resolve("repos").resolve(key).resolve(".agentx").resolve("state");
    }
}
