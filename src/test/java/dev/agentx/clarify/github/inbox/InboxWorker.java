package dev.agentx.clarify.github.inbox;

import dev.agentx.clarify.store.DeliveryQueue;
import dev.agentx.clarify.store.files.FileDeliveryQueue;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The child JVM of {@code reliability.InboxCrashTest}: 4 threads accept deliveries into the inbox at
 * {@code args[0]} without end, as concurrent webhook requests do, and a fifth marks the oldest
 * done, as the worker does. Queue segments of 64 KB, so segments are closed and deleted all the
 * time. Prints {@code ACK <id>} once accept returned (the 202) and
 * {@code DONE <id>} once done returned, flushed at once, until it is killed.
 */
public final class InboxWorker {
    private InboxWorker() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        String prefix = args[1];
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true,
                StandardCharsets.UTF_8);
        FileDeliveryQueue inbox = new FileDeliveryQueue(dir, Clock.systemUTC(), 64 * 1024);
        AtomicInteger next = new AtomicInteger();
        for (int t = 0; t < 4; t++) {
            Thread th = new Thread(() -> {
                while (true) {
                    String id = prefix + "-" + next.incrementAndGet();
                    byte[] body = ("{\"id\":\"" + id + "\",\"pad\":\"" + "x".repeat(2000) + "\"}")
                            .getBytes(StandardCharsets.UTF_8);
                    inbox.accept(id, "ping", body, "");
                    synchronized (out) {
                        out.println("ACK " + id + " .");
                    }
                }
            });
            th.start();
        }
        while (true) {
            for (DeliveryQueue.Queued q : inbox.queued()) {
                if (q.seq() % 2 == 0) {
                    inbox.done(q);
                    synchronized (out) {
                        out.println("DONE " + q.id() + " .");
                    }
                }
            }
            Thread.onSpinWait();
        }
    }
}
