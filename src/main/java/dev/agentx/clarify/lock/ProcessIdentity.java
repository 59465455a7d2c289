package dev.agentx.clarify.lock;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/** Who this process is, for lock files, and whether another process on this host is alive. */
public interface ProcessIdentity {
    long pid();

    String host();

    /** When this process started, if the platform tells. */
    Instant processStart();

    /** Whether the process with that pid (and, if known, start time) still runs on this host. */
    boolean isAlive(long pid, Instant processStart);

    /** This process; host and start time are looked up when a lock is first taken, not at start-up. */
    static ProcessIdentity current() {
        return new ProcessIdentity() {
            private String host;
            private Instant start;
            private boolean startLooked;

            @Override
            public long pid() {
                return ProcessHandle.current().pid();
            }

            @Override
            public synchronized String host() {
                if (host == null) {
                    host = hostName();
                }
                return host;
            }

            @Override
            public synchronized Instant processStart() {
                if (!startLooked) {
                    start = ProcessHandle.current().info().startInstant().orElse(null);
                    startLooked = true;
                }
                return start;
            }

            @Override
            public boolean isAlive(long pid, Instant recordedStart) {
                Optional<ProcessHandle> h = ProcessHandle.of(pid);
                if (h.isEmpty() || !h.get().isAlive()) {
                    return false;
                }
                if (recordedStart != null) {
                    Optional<Instant> actual = h.get().info().startInstant();
                    // a different start time means the pid was reused by another process
                    return actual.isEmpty() || Duration.between(actual.get(), recordedStart).abs().toMillis() < 1000;
                }
                return true;
            }
        };
    }

    /** The host name without a DNS lookup where the kernel tells it directly. */
    private static String hostName() {
        Path kernel = Path.of("/proc/sys/kernel/hostname");
        try {
            if (Files.isReadable(kernel)) {
                String h = Files.readString(kernel, StandardCharsets.US_ASCII).trim();
                if (!h.isEmpty()) {
                    return h;
                }
            }
        } catch (IOException ignored) {
            // fall through
        }
        String env = System.getenv("HOSTNAME");
        if (env != null && !env.isBlank()) {
            return env;
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "unknown-host";
        }
    }
}
