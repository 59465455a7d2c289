package dev.agentx.clarify.files;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;

/**
 * What went wrong with a file, for a message that names the file itself: the JDK's file errors
 * repeat their path in their message ("/a/b: /a/b: Read-only file system").
 */
public final class IoErrors {
    private IoErrors() {
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
