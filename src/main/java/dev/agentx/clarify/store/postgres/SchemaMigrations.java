package dev.agentx.clarify.store.postgres;

import dev.agentx.clarify.files.IoErrors;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.util.Arrays;
import java.util.Optional;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationInfoService;
import org.flywaydb.core.api.MigrationState;

/**
 * The database's schema against this build's SQL migrations ({@code src/main/resources/db/migration},
 * run by Flyway, each once, recorded in {@code flyway_schema_history}; several processes migrating
 * at once take turns on Flyway's lock): brought up to date by who writes ({@link #migrate}), only
 * checked by who looks ({@link #expectCurrent}). A schema a newer build made is refused by both
 * before anything is written, where Flyway alone would only warn.
 */
final class SchemaMigrations {
    private final DataSource dataSource;
    private final String description;

    SchemaMigrations(DataSource dataSource, String description) {
        this.dataSource = dataSource;
        this.description = description;
    }

    private Flyway flyway() {
        return Flyway.configure(PostgresDatabase.class.getClassLoader()).dataSource(dataSource)
                .locations("classpath:db/migration").load();
    }

    /**
     * Brings the schema up to date, after refusing one a newer build made: Flyway would only warn
     * and go on, and this build would then write to tables whose meaning it does not know.
     */
    void migrate() {
        MigrationInfoService info = schemaInfo();
        newer(info).ifPresent(newer -> {
            throw new ClarifyException(ErrorCode.INTERNAL, newer + " This agentx writes nothing to it, and nothing was "
                    + "changed in it: run the agentx that made it (or a newer one).");
        });
        try {
            flyway().migrate();
        } catch (RuntimeException e) {
            throw new ClarifyException(ErrorCode.INTERNAL, "cannot bring the schema of " + description
                    + " up to date: " + IoErrors.innermost(e), e);
        }
    }

    /**
     * Refuses a schema other than the one this build's migrations make, without changing it: none
     * yet, one a migration behind (the server of this build brings it up to date when it starts),
     * or one a newer build made.
     */
    void expectCurrent() {
        MigrationInfoService info = schemaInfo();
        MigrationInfo current = info.current();
        String latest = latest(info);
        if (current == null) {
            throw new ClarifyException(ErrorCode.INTERNAL, description + " holds no agentx schema yet: it is made "
                    + "when 'agentx serve' (or 'agentx store copy --to' it) first opens the database; this command "
                    + "only reads.");
        }
        String version = current.getVersion().getVersion();
        if (info.pending().length > 0) {
            throw new ClarifyException(ErrorCode.INTERNAL, "the schema of " + description + " is at version "
                    + version + "; this agentx reads version " + latest + ". The server of this version brings "
                    + "it up to date when it starts; this command only reads and changes nothing.");
        }
        newer(info).ifPresent(newer -> {
            throw new ClarifyException(ErrorCode.INTERNAL, newer + " Use the agentx of the server's version.");
        });
    }

    /** What the database's schema history says against this build's migrations. */
    private MigrationInfoService schemaInfo() {
        try {
            return flyway().info();
        } catch (RuntimeException e) {
            throw new ClarifyException(ErrorCode.INTERNAL, "cannot read the schema version of " + description + ": "
                    + IoErrors.innermost(e), e);
        }
    }

    /**
     * What to say of a schema a newer build made (a migration recorded that this build does not
     * have), or nothing.
     */
    private Optional<String> newer(MigrationInfoService info) {
        if (Arrays.stream(info.all()).noneMatch(m -> m.getState() == MigrationState.FUTURE_SUCCESS
                || m.getState() == MigrationState.FUTURE_FAILED)) {
            return Optional.empty();
        }
        return Optional.of("the schema of " + description + " is at version "
                + info.current().getVersion().getVersion() + ", made by a newer agentx; this one reads version "
                + latest(info) + ".");
    }

    /** The newest version this build's migrations make. */
    private static String latest(MigrationInfoService info) {
        return Arrays.stream(info.all()).filter(m -> m.getState().isResolved()).reduce((a, b) -> b)
                .map(m -> m.getVersion().getVersion()).orElse("?");
    }
}
