package dev.agentx.clarify.cli.daemon;

import java.io.File;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.CRC32;

/**
 * Where the daemon of this build lives: a folder only its user may enter ({@code
 * $XDG_RUNTIME_DIR/agentx}, else {@code agentx-USER} in the temporary folder, or {@code
 * AGENTX_DAEMON_DIR}), and in it one daemon per build, named by a checksum of the build's identity:
 * its class path with each entry's size and time, and the Java runtime. Files: {@code
 * cli-NAME.sock} (the socket), {@code cli-NAME.key} (the key a client proves itself with),
 * {@code cli-NAME.lock} (held by the running daemon), {@code cli-NAME.log} (its log) and {@code
 * cli-NAME.starting} (a daemon is being started).
 */
final class DaemonPlace {
    static final String DIR_ENV = "AGENTX_DAEMON_DIR";
    static final String CLASSPATH_PROPERTY = "agentx.classpath";
    private static final Set<PosixFilePermission> OWNER_ONLY = EnumSet.of(PosixFilePermission.OWNER_READ,
            PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE);

    final Path dir;
    final String identity;
    final String name;

    private DaemonPlace(Path dir, String identity) {
        this.dir = dir;
        this.identity = identity;
        CRC32 crc = new CRC32();
        crc.update(identity.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        this.name = "cli-" + Long.toHexString(crc.getValue());
    }

    /** The place of the build this process runs, for the environment {@code env}. */
    static DaemonPlace of(Map<String, String> env) throws IOException {
        return new DaemonPlace(folder(env), identity());
    }

    static Path folder(Map<String, String> env) {
        String explicit = env.get(DIR_ENV);
        if (explicit != null && !explicit.isBlank()) {
            return Path.of(explicit).toAbsolutePath();
        }
        String runtime = env.get("XDG_RUNTIME_DIR");
        if (runtime != null && !runtime.isBlank() && Path.of(runtime).isAbsolute() && Files.isDirectory(Path.of(runtime))) {
            return Path.of(runtime, "agentx");
        }
        String user = System.getProperty("user.name", "user").replaceAll("[^A-Za-z0-9._-]", "_");
        return Path.of(System.getProperty("java.io.tmpdir"), "agentx-" + user);
    }

    /**
     * What a daemon must share with its clients to run their commands: the class path (each entry
     * with its size and modification time, so a rebuilt jar gets a daemon of its own) and the Java
     * runtime.
     */
    static String identity() throws IOException {
        StringBuilder b = new StringBuilder();
        b.append(System.getProperty("java.home")).append('|').append(System.getProperty("java.vm.version"));
        for (String entry : classPath().split(File.pathSeparator)) {
            Path p = Path.of(entry);
            BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class);
            b.append('|').append(p).append(':').append(a.size()).append(':').append(a.lastModifiedTime().toMillis());
        }
        return b.toString();
    }

    /**
     * The class path that runs commands: this process's, or for the small client jar that
     * bin/agentx starts, the whole jar's ({@code -Dagentx.classpath}).
     */
    static String classPath() {
        String cp = System.getProperty(CLASSPATH_PROPERTY);
        String given = cp != null && !cp.isBlank() ? cp : System.getProperty("java.class.path", "");
        // absolute: the daemon starts in its own folder; empty entries (the JVM reads them as the
        // working folder) are left out, so that the daemon's class path is the same as its client's
        StringBuilder b = new StringBuilder();
        for (String entry : given.split(File.pathSeparator)) {
            if (!entry.isEmpty()) {
                if (b.length() > 0) {
                    b.append(File.pathSeparatorChar);
                }
                b.append(Path.of(entry).toAbsolutePath().normalize());
            }
        }
        return b.toString();
    }

    Path socket() {
        return dir.resolve(name + ".sock");
    }

    Path key() {
        return dir.resolve(name + ".key");
    }

    Path lock() {
        return dir.resolve(name + ".lock");
    }

    Path log() {
        return dir.resolve(name + ".log");
    }

    Path starting() {
        return dir.resolve(name + ".starting");
    }

    /** How long the files of another build's daemon that does not run are kept: see {@link #sweepOtherBuilds}. */
    static final Duration OTHER_BUILDS_KEPT = Duration.ofDays(1);
    /** The files of a build beside its {@code .lock} (a {@code .key.tmp} is one a start left half-way). */
    private static final String[] SUFFIXES = {".log", ".sock", ".key", ".key.tmp"};

    /**
     * Removes what the daemons of other builds left in the folder: each rebuilt jar is a build of
     * its own, with its own {@code cli-NAME.*} files, and a build that is not run again would keep
     * them forever. Those of a build are removed when its daemon does not run (nobody holds its
     * {@code .lock}: it is taken here while its files go, the lock file last), no start of it is
     * under way ({@code .starting}), and none of its files changed after {@code cutoff} (its log
     * tells when it last started or stopped). Returns the names of the builds removed.
     */
    List<String> sweepOtherBuilds(Instant cutoff) {
        List<String> removed = new ArrayList<>();
        String[] names = dir.toFile().list();
        if (names == null) {
            return removed;
        }
        for (String file : names) {
            if (!file.startsWith("cli-") || !file.endsWith(".lock") || file.equals(name + ".lock")) {
                continue;
            }
            String other = file.substring(0, file.length() - ".lock".length());
            try {
                if (Files.exists(dir.resolve(other + ".starting")) || changedAfter(other, cutoff)) {
                    continue;
                }
                try (FileChannel ch = FileChannel.open(dir.resolve(file), StandardOpenOption.WRITE)) {
                    FileLock held = ch.tryLock();
                    if (held == null) {
                        continue; // its daemon runs
                    }
                    for (String suffix : SUFFIXES) {
                        Files.deleteIfExists(dir.resolve(other + suffix));
                    }
                    Files.deleteIfExists(dir.resolve(file)); // last, while it is held
                    removed.add(other);
                }
            } catch (OverlappingFileLockException e) {
                // held by this very process: running
            } catch (IOException e) {
                // gone meanwhile, or not ours to remove: left for the next start
            }
        }
        return removed;
    }

    private boolean changedAfter(String other, Instant cutoff) throws IOException {
        if (changedAfter(dir.resolve(other + ".lock"), cutoff)) {
            return true;
        }
        for (String suffix : SUFFIXES) {
            if (changedAfter(dir.resolve(other + suffix), cutoff)) {
                return true;
            }
        }
        return false;
    }

    private static boolean changedAfter(Path file, Instant cutoff) throws IOException {
        try {
            return Files.getLastModifiedTime(file).toInstant().isAfter(cutoff);
        } catch (NoSuchFileException e) {
            return false; // not there
        }
    }

    /**
     * Whether the folder is this user's alone: a real folder (no link), owned by the user, that no
     * one else may read, write or enter. Anyone who could put a socket there would get every
     * command's environment, tokens included.
     */
    boolean private_() throws IOException {
        PosixFileAttributes a;
        try {
            a = Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return false;
        } catch (UnsupportedOperationException e) {
            return false; // no POSIX permissions: no daemon
        }
        return a.isDirectory() && OWNER_ONLY.containsAll(a.permissions())
                && a.owner().getName().equals(System.getProperty("user.name"));
    }

    /** Makes the folder (owner only) if it is missing. */
    void make() throws IOException {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            try {
                Files.createDirectories(dir.getParent());
                Files.createDirectory(dir, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(OWNER_ONLY));
            } catch (java.nio.file.FileAlreadyExistsException e) {
                // made by another process at the same time: checked by private_() as any other
            }
        }
    }

    /** A connection to the running daemon, or null if none answers. */
    SocketChannel connect() {
        SocketChannel ch = null;
        try {
            ch = SocketChannel.open(StandardProtocolFamily.UNIX);
            ch.connect(UnixDomainSocketAddress.of(socket()));
            return ch;
        } catch (IOException | UnsupportedOperationException e) {
            if (ch != null) {
                try {
                    ch.close();
                } catch (IOException ignored) {
                    // nothing was sent
                }
            }
            return null;
        }
    }
}
