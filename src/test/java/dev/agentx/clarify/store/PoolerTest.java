package dev.agentx.clarify.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.store.postgres.DatabaseUrl;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import dev.agentx.clarify.support.FreePorts;
import dev.agentx.clarify.support.TestPostgres;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * agentx through PgBouncer, Debian's, as a real process in front of the tests' PostgreSQL: in
 * session mode it works as on a direct connection; in transaction mode it is refused at start,
 * before anything is written, with what to do instead.
 */
@Tag("postgres")
class PoolerTest {
    private static final Path PGBOUNCER = Path.of("/usr/sbin/pgbouncer");
    private final List<Process> poolers = new ArrayList<>();
    @TempDir
    Path dir;

    @AfterEach
    void stop() throws InterruptedException {
        for (Process p : poolers) {
            p.destroy();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void throughAPoolerInTransactionModeTheStoreIsRefusedBeforeAnythingIsWritten() throws Exception {
        refusedThrough(pooler("transaction", "server_round_robin = 0")); // the session freed last served next
    }

    @Test
    void throughAPoolerInTransactionModeThatGoesRoundItsSessionsTheStoreIsRefusedToo() throws Exception {
        refusedThrough(pooler("transaction", "server_round_robin = 1"));
    }

    private void refusedThrough(int port) {
        TestPostgres.Database d = TestPostgres.newDatabase();
        String url = "postgresql://" + TestPostgres.OWNER + "@127.0.0.1:" + port + "/" + d.name();
        for (PostgresDatabase.Schema schema : PostgresDatabase.Schema.values()) {
            ClarifyException e = assertThrows(ClarifyException.class, () -> PostgresDatabase.open(
                    DatabaseUrl.parse(url, Map.of()), 4, Duration.ZERO, schema).close());
            assertTrue(e.getMessage().contains("a pooler in transaction mode (PgBouncer's pool_mode = transaction, "
                    + "or another pooler's) is in between") && e.getMessage().contains("nothing was changed")
                    && e.getMessage().contains("through the pooler in session mode"), e.getMessage());
        }
        assertEquals(0, TestPostgres.publicTables(d.dataSource()), "no table made, not even the migrations' history");
    }

    @Test
    void throughAPoolerInSessionModeTheStoreWorksAsOnADirectConnection() throws Exception {
        TestPostgres.Database d = TestPostgres.newDatabase();
        int port = pooler("session", "");
        String url = "postgresql://" + TestPostgres.OWNER + "@127.0.0.1:" + port + "/" + d.name();
        Instant at = Instant.parse("2026-03-01T10:00:00Z");
        java.time.Clock clock = java.time.Clock.fixed(at, java.time.ZoneOffset.UTC);
        try (PostgresDatabase db = PostgresDatabase.open(DatabaseUrl.parse(url, Map.of()), 4)) {
            var queue = db.deliveries("replica-a", clock);
            assertEquals(DeliveryQueue.Accepted.QUEUED, queue.accept("d-1", "issues",
                    "{\"n\":1}".getBytes(java.nio.charset.StandardCharsets.UTF_8), "acme/shop#1"));
            assertEquals(DeliveryQueue.Accepted.DUPLICATE, queue.accept("d-1", "issues",
                    "{\"n\":1}".getBytes(java.nio.charset.StandardCharsets.UTF_8), "acme/shop#1"));
            assertTrue(queue.received("d-1"));
        }
    }

    /** Starts PgBouncer in {@code mode} in front of the tests' PostgreSQL; its port. */
    private int pooler(String mode, String setting) throws IOException, InterruptedException {
        if (!Files.isExecutable(PGBOUNCER) && "true".equals(System.getenv("CI"))) {
            throw new IllegalStateException("the pooler test needs Debian's pgbouncer (apt-get install pgbouncer); "
                    + ".ci/run installs it");
        }
        Assumptions.assumeTrue(Files.isExecutable(PGBOUNCER), "pgbouncer is not installed: apt-get install pgbouncer");
        int port = FreePorts.next();
        String name = mode + poolers.size();
        Path users = dir.resolve(name + "-users.txt");
        Files.writeString(users, "\"" + TestPostgres.OWNER + "\" \"\"\n");
        Path ini = dir.resolve(name + ".ini");
        Files.writeString(ini, String.join("\n",
                "[databases]",
                "* = host=127.0.0.1 port=" + TestPostgres.server().getPort(),
                "[pgbouncer]",
                "listen_addr = 127.0.0.1",
                "listen_port = " + port,
                "unix_socket_dir =",
                "auth_type = trust",
                "auth_file = " + users,
                "pool_mode = " + mode,
                "default_pool_size = 20",
                "ignore_startup_parameters = extra_float_digits,options",
                setting,
                ""));
        List<String> command = new ArrayList<>(List.of(PGBOUNCER.toString()));
        if ("root".equals(System.getProperty("user.name"))) {
            command.addAll(List.of("-u", "nobody")); // PgBouncer refuses to run as root
            dir.toFile().setExecutable(true, false);
            dir.toFile().setReadable(true, false);
            users.toFile().setReadable(true, false);
            ini.toFile().setReadable(true, false);
        }
        command.add(ini.toString());
        Process p = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(dir.resolve(name + ".log").toFile()).start();
        poolers.add(p);
        Instant deadline = Instant.now().plusSeconds(20);
        while (true) {
            try (Socket s = new Socket("127.0.0.1", port)) {
                return port;
            } catch (IOException notYet) {
                if (!p.isAlive() || Instant.now().isAfter(deadline)) {
                    throw new IllegalStateException("pgbouncer did not start: " + Files.readString(dir.resolve(name
                            + ".log")));
                }
                Thread.sleep(50);
            }
        }
    }
}
