package dev.agentx.clarify.files;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;

/**
 * What went wrong, in the words a message to a user needs: a file's error without its path,
 * which the message names itself (the JDK's file errors repeat it: "/a/b: /a/b: Read-only file
 * system"), and the innermost cause of a failure wrapped by libraries (a refused connection).
 */
public final class IoErrors {
    private IoErrors() {
    }

    /** The message of the innermost cause of {@code e} (its class when it has none): what a user can act on. */
    public static String innermost(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getMessage() == null ? t.toString() : t.getMessage();
    }

    /** The reason of {@code e} without its file's path: "Read-only file system", "no such file". */
    public static String why(IOException e) {
        if (!(e instanceof FileSystemException f)) {
            return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        }
        String reason = f.getReason();
        if (reason == null) {
            reason = e instanceof NoSuchFileException ? "no such file or directory"
                    : e instanceof AccessDeniedException ? "permission denied"
                    : e instanceof FileAlreadyExistsException ? "it exists already"
                    : e instanceof NotDirectoryException ? "not a directory"
                    : e instanceof DirectoryNotEmptyException ? "the directory is not empty"
                    : e.getClass().getSimpleName();
        }
        return f.getOtherFile() == null ? reason : reason + " (" + f.getOtherFile() + ")";
    }
}
