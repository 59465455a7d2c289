package dev.agentx.clarify.store;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.store.files.DataDirectory;
import dev.agentx.clarify.store.files.FileCommentLinks;
import dev.agentx.clarify.store.postgres.PostgresDatabase;
import dev.agentx.clarify.support.TestPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The dashboard's links to posted comments, in files and in PostgreSQL: the same contract. */
class CommentLinksTest {
    abstract static class Contract {
        /** Two views of one store, as two replicas (or a restarted server) have. */
        abstract CommentLinks open();

        @Test
        void recordsEachCommentOfAnIssueByItsEffectKey() {
            CommentLinks links = open();
            assertEquals(Map.of(), links.of("1296269", 1));
            links.record("1296269", 1, "comment:CLR-1-001:1", 777);
            links.record("1296269", 1, "comment:CLR-1-001:2", 778);
            links.record("1296269", 2, "comment:CLR-2-001:1", 900);
            links.record("1296270", 1, "comment:CLR-1-001:1", 901);
            assertEquals(Map.of("comment:CLR-1-001:1", 777L, "comment:CLR-1-001:2", 778L), links.of("1296269", 1));
            assertEquals(Map.of("comment:CLR-2-001:1", 900L), links.of("1296269", 2));
            assertEquals(Map.of("comment:CLR-1-001:1", 901L), open().of("1296270", 1), "seen by another view");
        }

        @Test
        void aCommentPostedAgainTakesItsNewId() {
            CommentLinks links = open();
            links.record("1296269", 3, "k", 1);
            open().record("1296269", 3, "k", 2);
            assertEquals(Map.of("k", 2L), links.of("1296269", 3));
        }
    }

    @Nested
    class InFiles extends Contract {
        @TempDir
        Path data;

        @Override
        CommentLinks open() {
            return new FileCommentLinks(new DataDirectory(data, LockManager.standard(Clock.systemUTC())));
        }

        @Test
        void keepsThemBesideTheRepositorysState() {
            open().record("1296269", 4, "k", 5);
            assertEquals(true, Files.isRegularFile(data.resolve("repos/1296269/.agentx/state/github/comments/"
                    + "issue-4.json")));
        }
    }

    @Nested
    @Tag("postgres")
    class InPostgres extends Contract {
        private final PostgresDatabase db = TestPostgres.newDatabase().open(2);

        @AfterEach
        void close() {
            db.close();
        }

        @Override
        CommentLinks open() {
            return db.commentLinks();
        }
    }
}
