package dev.agentx.clarify.reliability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.ledger.LedgerWorker;
import dev.agentx.clarify.lock.FileLock;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.support.Jvm;
import dev.agentx.clarify.support.OnlyDocumentedState;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A child JVM writes in a loop and is killed with SIGKILL at a random moment, 50 times. After each
 * kill: the ledger parses, every write acknowledged before the kill is there, and a lock the victim
 * left behind is recovered by the next writer at once (its pid is dead on this host).
 */
@ExtendWith(OnlyDocumentedState.class)
class CrashSafetyTest {
    @TempDir
    Path root;

    @Test
    void fiftyRandomKillsTearNothingAndLoseNothing() throws Exception {
        int kills = 50;
        Random random = new Random(20261121L);
        Set<String> acknowledged = new HashSet<>();
        int locksLeft = 0;
        for (int k = 0; k < kills; k++) {
            Process p = Jvm.builder(LedgerWorker.class, "loop", root.toString(), "3", "k" + k)
                    .redirectError(ProcessBuilder.Redirect.DISCARD).start();
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            String first = out.readLine();
            assertTrue(first != null && first.startsWith("ACK "), String.valueOf(first));
            acknowledged.add(first.split(" ")[2]);
            // let it write for a random while, then kill it wherever it is
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(random.nextInt(150));
            while (System.nanoTime() < until) {
                if (out.ready()) {
                    String line = out.readLine();
                    if (line != null && line.startsWith("ACK ")) {
                        acknowledged.add(line.split(" ")[2]);
                    }
                }
            }
            p.toHandle().destroyForcibly(); // SIGKILL; unlike Process.destroyForcibly it keeps our end of the pipe open
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
            // lines the victim printed before it died were acknowledged too
            String line;
            while ((line = out.readLine()) != null) {
                if (line.startsWith("ACK ") && line.split(" ").length == 3) {
                    acknowledged.add(line.split(" ")[2]);
                }
            }
            LocalMode local = LocalMode.open(root, Clock.systemUTC());
            if (Files.exists(FileLock.lockPathOf(local.files().ledgers().fileOf(3)))) {
                locksLeft++;
            }
            Ledger ledger = local.ledgers().read(3).orElseThrow(); // parses, or the test fails here
            Set<String> present = new HashSet<>();
            ledger.clarifications().forEach(r -> present.add(r.thread().get(0).body()));
            Set<String> lost = new HashSet<>(acknowledged);
            lost.removeAll(present);
            assertEquals(Set.of(), lost, "acknowledged writes lost after kill " + k);
            for (int i = 0; i < ledger.clarifications().size(); i++) {
                assertEquals(String.format("CLR-3-%03d", i + 1), ledger.clarifications().get(i).id());
            }
            // the next writer is not held up by whatever the victim left
            long start = System.nanoTime();
            local.engine().execute(new ClarifyCommand.Ask(3, "engineer", "architect", null, "after kill " + k, false,
                    List.of(), null));
            acknowledged.add("after kill " + k);
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(3), "lock recovered at once");
        }
        System.out.println("crash safety: " + kills + " kills, " + locksLeft + " left a lock behind (recovered), "
                + "0 torn files, 0 lost writes, " + acknowledged.size() + " acknowledged writes checked");
    }
}
