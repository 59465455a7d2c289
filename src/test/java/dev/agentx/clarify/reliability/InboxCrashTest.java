package dev.agentx.clarify.reliability;

import dev.agentx.clarify.github.inbox.InboxWorker;
import dev.agentx.clarify.store.DeliveryQueue;
import dev.agentx.clarify.store.files.FileDeliveryQueue;
import dev.agentx.clarify.support.Jvm;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A child JVM ({@link InboxWorker}, queue segments of 64 KB) accepts deliveries into the inbox from 4 threads and marks some done, and is killed
 * with SIGKILL at a random moment, 30 times. After each kill the inbox opens (a torn last append
 * is cut off), every delivery acknowledged and not done is queued with its body, and none marked
 * done is queued again.
 */
class InboxCrashTest {
    @TempDir
    Path dir;

    @Test
    void thirtyRandomKillsLoseNoAcknowledgedDelivery() throws Exception {
        int kills = 30;
        Random random = new Random(20261123L);
        Set<String> acked = new HashSet<>();
        Set<String> done = new HashSet<>();
        for (int k = 0; k < kills; k++) {
            Process p = Jvm.builder(InboxWorker.class, dir.toString(), "k" + k)
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            String first = out.readLine();
            assertTrue(first != null && first.endsWith(" ."), "the child started: " + first);
            note(first, acked, done);
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20 + random.nextInt(200));
            while (System.nanoTime() < until) {
                if (out.ready()) {
                    note(out.readLine(), acked, done);
                }
            }
            p.toHandle().destroyForcibly(); // SIGKILL; our end of the pipe stays open
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
            String line;
            while ((line = out.readLine()) != null) {
                note(line, acked, done);
            }
            FileDeliveryQueue inbox = new FileDeliveryQueue(dir, Clock.systemUTC());
            Set<String> queued = new HashSet<>();
            for (DeliveryQueue.Queued q : inbox.queued()) {
                queued.add(q.id());
                String body = new String(inbox.read(q).body(), StandardCharsets.UTF_8);
                assertTrue(body.startsWith("{\"id\":\"" + q.id() + "\""), "body of " + q.id() + " intact");
            }
            Set<String> lost = new HashSet<>(acked);
            lost.removeAll(done);
            lost.removeAll(queued);
            // done just before the kill, too late to say so: then the inbox knows the id as seen
            lost.removeIf(id -> inbox.accept(id, "ping", new byte[] {'{', '}'}, "") == DeliveryQueue.Accepted.DUPLICATE);
            assertEquals(Set.of(), lost, "acknowledged deliveries lost after kill " + k);
            Set<String> back = new HashSet<>(done);
            back.retainAll(queued);
            assertEquals(Set.of(), back, "deliveries done and queued again after kill " + k);
        }
        System.out.println("inbox crash safety: " + kills + " kills, " + acked.size() + " acknowledged deliveries, "
                + done.size() + " done, 0 lost, 0 queued again");
    }

    private static void note(String line, Set<String> acked, Set<String> done) {
        if (line == null || !line.endsWith(" .")) {
            return; // cut short by the kill
        }
        String[] parts = line.split(" ");
        if (parts[0].equals("ACK")) {
            acked.add(parts[1]);
        } else if (parts[0].equals("DONE")) {
            done.add(parts[1]);
        }
    }
}
