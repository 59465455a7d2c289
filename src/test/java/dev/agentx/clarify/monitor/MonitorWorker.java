package dev.agentx.clarify.monitor;

import dev.agentx.clarify.channel.Delivery;
import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.lock.LockManager;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * A separate monitor process for {@link MultiProcessMonitorTest}: {@code ROOT INSTANT}. It runs
 * with its clock set to INSTANT (and moving on from there), prints "READY", waits for a line on
 * stdin so that all workers start their pass together, runs one pass and prints "ACTION kind id"
 * per action, then "DONE". Its answer channel appends "ASKED id" to ROOT/asked.log.
 */
public final class MonitorWorker {
    private MonitorWorker() {
    }

    public static void main(String[] args) throws Exception {
        Path root = Path.of(args[0]);
        Instant at = Instant.parse(args[1]);
        Clock clock = Clock.offset(Clock.systemUTC(), Duration.between(Instant.now(), at));
        Path log = root.resolve("asked.log");
        LocalMode local = new LocalMode(root, clock, LockManager.standard(clock), request -> {
            try {
                Files.writeString(log, "ASKED " + request.id() + "\n", StandardOpenOption.CREATE,
                        StandardOpenOption.APPEND);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            return new Delivery.Deferred("later");
        });
        System.out.println("READY");
        System.out.flush();
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
        MonitorReport report = local.monitor().run();
        for (MonitorAction a : report.actions()) {
            System.out.println("ACTION " + a.kind() + " " + a.id());
        }
        System.out.println("DONE");
        System.out.flush();
    }
}
