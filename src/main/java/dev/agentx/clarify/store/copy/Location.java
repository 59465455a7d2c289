package dev.agentx.clarify.store.copy;

import dev.agentx.clarify.store.postgres.DatabaseUrl;
import java.nio.file.Path;
import java.util.Map;

/** One side of a copy: {@code files:DIR} (a data folder) or a PostgreSQL URL. */
public sealed interface Location {
    static Location parse(String text, Map<String, String> env) {
        if (text.startsWith("files:")) {
            String dir = text.substring("files:".length());
            if (dir.isBlank()) {
                throw new IllegalArgumentException("'files:' names no folder: give files:/var/lib/agentx");
            }
            return new Files(Path.of(dir));
        }
        if (DatabaseUrl.looksLikeOne(text)) {
            return new Database(DatabaseUrl.parse(text, env));
        }
        throw new IllegalArgumentException("'" + DatabaseUrl.redact(text) + "' is neither files:DIR (the server's "
                + "AGENTX_DATA_DIR) nor a PostgreSQL URL (postgresql://USER:PASSWORD@HOST:5432/DATABASE)");
    }

    /** A data folder, as the server's {@code AGENTX_DATA_DIR}. */
    record Files(Path dir) implements Location {
        @Override
        public String toString() {
            return "files:" + dir;
        }
    }

    /** A PostgreSQL database. */
    record Database(DatabaseUrl url) implements Location {
        @Override
        public String toString() {
            return url.toString();
        }
    }
}
