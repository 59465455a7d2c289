package dev.agentx.clarify.config;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * Says why a file named by a setting (a private key, a password file) could not be read, in words
 * that tell the operator what to change. The common case in a container: the file was mounted from
 * the host with mode 600 and belongs to the host's user, while the server runs as the image's own
 * user, so the message names the user and uid this process runs as.
 */
public final class UnreadableFile {
    private UnreadableFile() {
    }

    /** A sentence (no final period) for {@code file}, which {@code e} failed to read. */
    public static String explain(Path file, IOException e) {
        if (e instanceof NoSuchFileException) {
            return "there is no file " + file;
        }
        if (e instanceof AccessDeniedException) {
            return file + " is not readable by the user this process runs as (" + processUser()
                    + "): give that user read access to it (for example chown it to that uid and keep it mode 600)";
        }
        return file + " cannot be read: " + e;
    }

    /** {@code name, uid N} of this process, as far as the platform tells. */
    static String processUser() {
        String name = System.getProperty("user.name", "?");
        try {
            // /proc/self belongs to the process's user on Linux
            Object uid = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
            return name + ", uid " + uid;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException | SecurityException ex) {
            return name;
        }
    }
}
