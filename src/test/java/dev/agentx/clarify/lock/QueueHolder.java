package dev.agentx.clarify.lock;

import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** A process that holds the OS lock of a queue file for some milliseconds: a waiter's real, foreign holder. */
public final class QueueHolder {
    private QueueHolder() {
    }

    public static void main(String[] args) throws Exception {
        java.nio.file.Files.createDirectories(Path.of(args[0]).getParent()); // the runtime folder
        try (FileChannel ch = FileChannel.open(Path.of(args[0]), StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            ch.lock();
            System.out.println("held");
            System.out.flush();
            Thread.sleep(Long.parseLong(args[1]));
        }
    }
}
