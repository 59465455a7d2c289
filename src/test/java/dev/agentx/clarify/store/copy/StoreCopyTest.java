package dev.agentx.clarify.store.copy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.store.DeliveryQueue;
import dev.agentx.clarify.store.files.FileDeliveryQueue;
import dev.agentx.clarify.support.MutableClock;
import dev.agentx.clarify.support.TestPostgres;
import dev.agentx.clarify.support.TestRoot;
import dev.agentx.clarify.support.TestRoot.Run;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code agentx store copy} between a data folder and a real PostgreSQL server, and the read
 * commands with {@code --database-url}: what they print from the database is what they print
 * from the folder the state was copied from.
 */
@Tag("postgres")
class StoreCopyTest {
    @TempDir
    Path tmp;
    private final MutableClock clock = MutableClock.at("2026-11-25T09:00:00Z");
    private Path data;
    private TestRoot shop;
    private TestRoot web;
    private TestRoot cwd;

    @BeforeEach
    void state() throws Exception {
        data = tmp.resolve("data");
        shop = new TestRoot(data.resolve("repos/acme/shop"), clock);
        web = new TestRoot(data.resolve("repos/acme/web"), clock);
        cwd = new TestRoot(Files.createDirectories(tmp.resolve("cwd")), clock);
        ok(shop, "clarify", "ask", "--issue", "42", "--from", "engineer", "--to", "architect", "--topic", "Auth",
                "JWT or sessions?");
        ok(shop, "clarify", "answer", "CLR-42-001", "JWT, see ADR-42.");
        ok(shop, "clarify", "resolve", "CLR-42-001", "-m", "JWT.");
        ok(shop, "clarify", "ask", "--issue", "43", "--from", "engineer", "--to", "architect", "Which database?");
        ok(shop, "hook", "start", "--agent", "reviewer", "--issue", "42");
        ok(web, "clarify", "ask", "--issue", "7", "--from", "architect", "--to", "product-manager",
                "Who are the users?");
        clock.advance(Duration.ofHours(5)); // CLR-43-001 and CLR-7-001 go stale: the monitor marks them
        ok(shop, "monitor");
        ok(web, "monitor");
    }

    private static Run ok(TestRoot r, String... args) {
        Run run = r.cli(args);
        assertEquals(0, run.code(), String.join(" ", args) + "\n" + run.out() + run.err());
        return run;
    }

    @Test
    void aDataFolderCopiedToPostgresAndBackLosesNothing() throws Exception {
        TestPostgres.Database db = TestPostgres.newDatabase();
        Run copy = ok(cwd, "store", "copy", "--from", "files:" + data, "--to", db.url());
        assertTrue(copy.out().contains("acme/shop: 2 ledgers (2 clarifications), 3 agent statuses"), copy.out());
        assertTrue(copy.out().contains("acme/web: 1 ledger (1 clarification)"), copy.out());
        assertTrue(copy.out().contains("every count and checksum read back"), copy.out());

        // the read commands print from the database what they print from the folder
        for (List<String> command : List.of(List.of("clarify"), List.of("clarify", "--issue", "42"),
                List.of("clarify", "show", "CLR-43-001"), List.of("state"), List.of("clarify", "digest"),
                List.of("clarify", "stale"), List.of("ready"), List.of("--json", "clarify"))) {
            String[] files = command.toArray(String[]::new);
            String[] database = concat(command, "--database-url", db.url(), "--repo", "acme/shop");
            Run fromFiles = ok(shop, files);
            Run fromDatabase = ok(cwd, database);
            assertEquals(fromFiles.out(), fromDatabase.out(), String.join(" ", command));
        }
        // monitor only looks: nothing to do yet
        Run monitor = ok(cwd, "monitor", "--database-url", db.url(), "--repo", "acme/shop");
        assertTrue(monitor.out().startsWith("Nothing to do: checked "), monitor.out());
        assertTrue(monitor.err().contains("only reads"), monitor.err());
        // a database with several repositories needs --repo
        Run ambiguous = cwd.cli("clarify", "--database-url", db.url());
        assertEquals(2, ambiguous.code(), ambiguous.err());
        assertTrue(ambiguous.err().contains("--repo OWNER/NAME is needed"), ambiguous.err());

        Path back = tmp.resolve("back");
        Run restore = ok(cwd, "store", "copy", "--from", db.url(), "--to", "files:" + back);
        assertTrue(restore.out().contains("every count and checksum read back"), restore.out());
        TestRoot restored = new TestRoot(back.resolve("repos/acme/shop"), clock);
        assertEquals(ok(shop, "clarify", "--issue", "43").out(), ok(restored, "clarify", "--issue", "43").out());
        assertEquals(ok(shop, "state").out(), ok(restored, "state").out());
        assertEquals(Files.readString(shop.state().resolve("clarifications/issue-42.json")),
                Files.readString(restored.state().resolve("clarifications/issue-42.json")));

        // days later: over the database monitor says, in its own output, what the pass over the folder then does
        clock.advance(Duration.ofDays(3));
        JsonNode planned = JsonSupport.mapper().readTree(ok(cwd, "--json", "monitor", "--database-url", db.url(),
                "--repo", "acme/shop").out());
        assertTrue(planned.get("readOnly").asBoolean());
        JsonNode acted = JsonSupport.mapper().readTree(ok(shop, "--json", "monitor").out());
        assertTrue(acted.get("actions").size() > 0, acted.toString());
        assertEquals(kindsAndIds(acted), kindsAndIds(planned));
        assertEquals(acted.get("ledgers"), planned.get("ledgers"));
        assertEquals(acted.get("active"), planned.get("active"));
        assertEquals(planned.get("actions"), JsonSupport.mapper().readTree(ok(cwd, "--json", "monitor",
                "--database-url", db.url(), "--repo", "acme/shop").out()).get("actions"), "the database was not acted on");
    }

    private static List<String> kindsAndIds(JsonNode report) {
        List<String> out = new java.util.ArrayList<>();
        report.get("actions").forEach(a -> out.add(a.get("kind").asText() + " " + a.get("id").asText()));
        return out;
    }

    /**
     * Where the server's recovery pass stopped asking GitHub for missed deliveries goes with the
     * copy, so the server on the destination does not ask for three days of deliveries again; a
     * destination's own is kept.
     */
    @Test
    void theRecoveryPositionGoesWithTheCopyAndADestinationsOwnIsKept() throws Exception {
        TestPostgres.Database db = TestPostgres.newDatabase();
        Run none = ok(cwd, "store", "copy", "--from", "files:" + data, "--to", db.url(), "--repo", "acme/web");
        assertTrue(none.out().contains("; no recovery position at the source."), none.out());

        String position = "{\"checkedThrough\":\"2026-11-25T08:59:00Z\",\"asked\":{\"guid-1\":\"2026-11-25T08:30:00Z\"}}";
        Files.writeString(data.resolve("recovery.json"), position);
        Run copy = ok(cwd, "--json", "store", "copy", "--from", "files:" + data, "--to", db.url(), "--repo", "acme/shop");
        assertTrue(copy.out().contains("\"recovery\" : \"handed-over\""), copy.out());

        Path back = tmp.resolve("back");
        Run restore = ok(cwd, "store", "copy", "--from", db.url(), "--to", "files:" + back);
        assertTrue(restore.out().contains("; the recovery pass's position handed over."), restore.out());
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        assertEquals(json.readTree(position), json.readTree(back.resolve("recovery.json").toFile()));

        Path other = tmp.resolve("other");
        Files.createDirectories(other);
        Files.writeString(other.resolve("recovery.json"), "{\"checkedThrough\":\"2026-11-26T00:00:00Z\"}");
        Run kept = ok(cwd, "store", "copy", "--from", db.url(), "--to", "files:" + other);
        assertTrue(kept.out().contains("; the destination's recovery position kept."), kept.out());
        assertEquals("{\"checkedThrough\":\"2026-11-26T00:00:00Z\"}", Files.readString(other.resolve("recovery.json")));
    }

    @Test
    void aDestinationThatHoldsStateIsRefusedAndLeftAsItWas() {
        TestPostgres.Database db = TestPostgres.newDatabase();
        ok(cwd, "store", "copy", "--from", "files:" + data, "--to", db.url(), "--repo", "ACME/Web");
        Run again = cwd.cli("store", "copy", "--from", "files:" + data, "--to", db.url());
        assertEquals(2, again.code(), again.err());
        assertTrue(again.err().contains("already holds state for acme/web; nothing was copied"), again.err());
        assertEquals("", again.out(), "no heading for a copy that does not begin");
        Run shopThere = cwd.cli("clarify", "--database-url", db.url(), "--repo", "acme/shop");
        assertEquals(2, shopThere.code(), shopThere.err());
        assertTrue(shopThere.err().contains("--repo acme/shop: ") && shopThere.err().contains(
                " holds nothing of that repository; it holds acme/web."), "acme/shop was not copied: " + shopThere.err());
    }

    /**
     * A source that cannot be copied whole (here acme/web's event log, read after acme/shop's state)
     * writes nothing at all, to a database or to a folder, and says which repository and why; once
     * mended, the same copy runs.
     */
    @Test
    void aSourceThatCannotBeReadWholeWritesNothingAndNamesTheRepository() throws Exception {
        Path events = data.resolve("repos/acme/web/.agentx/state/events.jsonl");
        String good = Files.readString(events);
        Files.writeString(events, good + "{\"type\":\"x\"}\n");
        TestPostgres.Database db = TestPostgres.newDatabase();
        Path folder = tmp.resolve("copy");
        for (String to : new String[] {db.url(), "files:" + folder}) {
            Run copy = cwd.cli("store", "copy", "--from", "files:" + data, "--to", to);
            assertEquals(1, copy.code(), copy.out() + copy.err());
            assertTrue(copy.err().contains("acme/web (") && copy.err().contains("1 entries of its event log cannot "
                    + "be read") && copy.err().contains("nothing was copied"), copy.err());
            assertEquals("", copy.out(), "no heading for a copy that does not begin");
        }
        assertEquals(0, rows(db, "SELECT count(*) FROM ledgers") + rows(db, "SELECT count(*) FROM agent_statuses")
                + rows(db, "SELECT count(*) FROM events"), "nothing written to the database");
        assertFalse(Files.exists(folder.resolve("repos")), "nothing written to the folder");
        Files.writeString(events, good);
        ok(cwd, "store", "copy", "--from", "files:" + data, "--to", db.url());
    }

    /**
     * A copy that fails while writing (here the database refuses acme/web's events, after
     * acme/shop and acme/web's ledgers went in) removes what it wrote, so the same copy can run
     * again once the cause is gone.
     */
    @Test
    void aCopyThatFailsWhileWritingRemovesWhatItWrote() throws Exception {
        TestPostgres.Database db = TestPostgres.newDatabase();
        ok(cwd, "store", "copy", "--from", "files:" + data, "--to", db.url(), "--repo", "acme/shop");
        TestPostgres.Database empty = TestPostgres.newDatabase();
        empty.open(1).close(); // migrated, so the trigger has its table
        sql(empty, "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
                + "$$ BEGIN RAISE EXCEPTION 'no room for events of %', NEW.repo; END $$");
        sql(empty, "CREATE TRIGGER refuse BEFORE INSERT ON events FOR EACH ROW WHEN (NEW.repo = 'acme/web') "
                + "EXECUTE FUNCTION refuse()");
        Run copy = cwd.cli("store", "copy", "--from", "files:" + data, "--to", empty.url());
        assertEquals(1, copy.code(), copy.out() + copy.err());
        assertTrue(copy.err().contains("copying acme/web to ") && copy.err().contains("no room for events of "
                + "acme/web") && copy.err().contains("removed again, so the copy can be run again"), copy.err());
        assertTrue(copy.out().contains("acme/shop: 2 ledgers"), "acme/shop was copied first: " + copy.out());
        assertEquals(0, rows(empty, "SELECT count(*) FROM ledgers") + rows(empty, "SELECT count(*) FROM "
                + "agent_statuses") + rows(empty, "SELECT count(*) FROM events") + rows(empty,
                "SELECT count(*) FROM shared_notes WHERE name LIKE 'mirror/%'"), "what it wrote is gone");
        sql(empty, "DROP TRIGGER refuse ON events");
        Run again = ok(cwd, "store", "copy", "--from", "files:" + data, "--to", empty.url());
        assertTrue(again.out().contains("every count and checksum read back"), again.out());
        // and from the database to a folder that fails the same way: the folder is left as it was
        Path folder = tmp.resolve("back");
        Path webState = Files.createDirectories(folder.resolve("repos/acme/web/.agentx/state"));
        // an event log that reads as empty and cannot be written: a link into a folder that is not there
        Files.createSymbolicLink(webState.resolve("events.jsonl"), tmp.resolve("gone/events.jsonl"));
        Run back = cwd.cli("store", "copy", "--from", empty.url(), "--to", "files:" + folder);
        assertEquals(1, back.code(), back.out() + back.err());
        assertTrue(back.out().contains("acme/shop: 2 ledgers") && back.err().contains("copying acme/web to ")
                && back.err().contains("removed again"), back.out() + back.err());
        try (java.util.stream.Stream<Path> left = Files.walk(folder.resolve("repos"))) {
            // the runtime folder stays while this process runs, as after any command (docs/architecture.md)
            assertEquals(List.of(), left.filter(Files::isRegularFile).filter(p -> !p.getFileName().toString()
                    .startsWith(".") && !p.toString().contains("/.runtime/")).map(Path::toString).toList(),
                    "no state left in the folder");
        }
    }

    /**
     * The data dir's inbox as a server stopped with deliveries in it leaves it: acme/shop#42's
     * comment acknowledged and failed once (retried in 10 s), acme/web#7's acknowledged, a ping
     * about no issue acknowledged, and one delivery done with (its id must stay a duplicate).
     */
    private void inboxWithDeliveriesWaiting(Path data) {
        FileDeliveryQueue inbox = new FileDeliveryQueue(data.resolve("inbox"), clock);
        inbox.accept("done-1", "issue_comment", "{\"n\":1}".getBytes(StandardCharsets.UTF_8), "acme/shop#42");
        inbox.done(inbox.queued().get(0));
        inbox.accept("shop-2", "issue_comment", "{\"n\":2}".getBytes(StandardCharsets.UTF_8), "acme/shop#42");
        inbox.saveProgress(inbox.queued().get(0), new DeliveryQueue.Progress(0, false, 1,
                clock.instant().plusSeconds(10)));
        inbox.accept("web-3", "issues", "{\"n\":3}".getBytes(StandardCharsets.UTF_8), "acme/web#7");
        inbox.accept("ping-4", "ping", "{\"n\":4}".getBytes(StandardCharsets.UTF_8), "");
        inbox.close();
    }

    /** Every file under {@code dir} with its bytes. */
    private static java.util.Map<Path, String> files(Path dir) throws Exception {
        java.util.Map<Path, String> out = new java.util.TreeMap<>();
        try (java.util.stream.Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.filter(Files::isRegularFile).toList()) {
                out.put(dir.relativize(p), java.util.HexFormat.of().formatHex(Files.readAllBytes(p)));
            }
        }
        return out;
    }

    /**
     * Deliveries the server acknowledged and has not done with go with the copy, each with the
     * repository it is about (one about none with any), into the database's queue and back into a
     * folder's inbox, in their order, with their failed attempts; and the ids of deliveries done with
     * go too, so that a redelivery of one stays a duplicate. The source's inbox is left as it was.
     */
    @Test
    void deliveriesWaitingAndIdsDoneWithGoWithTheCopyBothWays() throws Exception {
        inboxWithDeliveriesWaiting(data);
        Files.writeString(data.resolve("replica"), "host-a-1a2b3c\n");
        java.util.Map<Path, String> inboxBefore = files(data.resolve("inbox"));
        TestPostgres.Database db = TestPostgres.newDatabase();

        Run shop = ok(cwd, "store", "copy", "--from", "files:" + data, "--to", db.url(), "--repo", "acme/shop");
        assertTrue(shop.out().contains("\n  deliveries: 2 acknowledged and not done with, 1 id of deliveries done "
                + "with; checksum "), shop.out());
        assertTrue(shop.out().contains(" read back; 1 delivery of other repositories left for their repository's "
                + "copy\n"), shop.out());
        Run web = ok(cwd, "--json", "store", "copy", "--from", "files:" + data, "--to", db.url(), "--repo", "acme/web");
        JsonNode carried = JsonSupport.mapper().readTree(web.out()).get("deliveries");
        assertEquals(1, carried.get("source").get("waiting").asInt(), carried.toString());
        assertEquals(0, carried.get("source").get("done").asInt(), carried.toString());
        assertEquals(2, carried.get("alreadyThere").asInt(), "the ping and the id done with: " + carried);
        assertTrue(carried.get("same").asBoolean(), carried.toString());
        assertEquals(inboxBefore, files(data.resolve("inbox")), "the source's inbox as it was");

        // in the database: queued in their order, held by the data dir's server, as received
        assertEquals("shop-2 acme/shop#42 1 host-a-1a2b3c {\"n\":2}|ping-4  0 host-a-1a2b3c {\"n\":4}|"
                + "web-3 acme/web#7 0 host-a-1a2b3c {\"n\":3}", text(db, "SELECT string_agg(h.id || ' ' || d.order_key "
                + "|| ' ' || d.attempts || ' ' || d.replica || ' ' || convert_from(d.body, 'UTF8'), '|' ORDER BY d.seq) "
                + "FROM delivery_queue d JOIN deliveries h ON h.seq = d.seq"));
        assertEquals("processed", text(db, "SELECT state FROM deliveries WHERE id = 'done-1'"));
        try (dev.agentx.clarify.store.postgres.PostgresDatabase server = dev.agentx.clarify.store.postgres
                .PostgresDatabase.open(dev.agentx.clarify.store.postgres.DatabaseUrl.parse(db.url(),
                        java.util.Map.of()), 2)) {
            DeliveryQueue queue = server.deliveries("host-a-1a2b3c", clock);
            assertEquals(List.of("shop-2", "ping-4", "web-3"), queue.queued().stream().map(DeliveryQueue.Queued::id)
                    .toList(), "the server on the data dir finds them at its start");
            DeliveryQueue.Turn turn = queue.take(queue.queued().get(0), clock.instant());
            assertEquals(new DeliveryQueue.Progress(0, false, 1, clock.instant().plusSeconds(10)),
                    ((DeliveryQueue.Turn.Mine) turn).progress());
            assertEquals(DeliveryQueue.Accepted.DUPLICATE, queue.accept("done-1", "issue_comment", new byte[0], ""));
        }

        Path back = tmp.resolve("back");
        Run restore = ok(cwd, "store", "copy", "--from", db.url(), "--to", "files:" + back);
        assertTrue(restore.out().contains("\n  deliveries: 3 acknowledged and not done with, 1 id of deliveries done "
                + "with; checksum "), restore.out());
        FileDeliveryQueue inbox = new FileDeliveryQueue(back.resolve("inbox"), clock);
        assertEquals(List.of("shop-2", "ping-4", "web-3"), inbox.queued().stream().map(DeliveryQueue.Queued::id)
                .toList());
        DeliveryQueue.Queued first = inbox.queued().get(0);
        assertEquals("acme/shop#42", first.key());
        assertEquals("{\"n\":2}", new String(inbox.read(first).body(), StandardCharsets.UTF_8));
        assertEquals(1, inbox.progress(first).attempts());
        assertEquals(clock.instant().plusSeconds(10), inbox.progress(first).notBefore());
        assertEquals(DeliveryQueue.Accepted.DUPLICATE, inbox.accept("done-1", "issue_comment", new byte[0], ""));
        inbox.close();
    }

    /**
     * A copy whose deliveries cannot be carried (here the database refuses them, then a folder's
     * inbox takes the first and not the next) removes what it wrote, the deliveries it carried
     * too, and leaves an inbox that was there as it was; a source inbox that cannot be read whole
     * writes nothing.
     */
    @Test
    void deliveriesThatCannotBeCarriedLeaveNothingBehind() throws Exception {
        inboxWithDeliveriesWaiting(data);
        TestPostgres.Database db = TestPostgres.newDatabase();
        db.open(1).close();
        sql(db, "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
                + "$$ BEGIN RAISE EXCEPTION 'no room for delivery %', NEW.seq; END $$");
        sql(db, "CREATE TRIGGER refuse BEFORE INSERT ON delivery_queue FOR EACH ROW EXECUTE FUNCTION refuse()");
        Run copy = cwd.cli("store", "copy", "--from", "files:" + data, "--to", db.url());
        assertEquals(1, copy.code(), copy.out() + copy.err());
        assertTrue(copy.err().contains("carrying the deliveries to ") && copy.err().contains("no room for delivery")
                && copy.err().contains("removed again, so the copy can be run again"), copy.err());
        assertEquals(0, rows(db, "SELECT count(*) FROM ledgers") + rows(db, "SELECT count(*) FROM deliveries"),
                "nothing left in the database");
        sql(db, "DROP TRIGGER refuse ON delivery_queue");
        ok(cwd, "store", "copy", "--from", "files:" + data, "--to", db.url());

        // a folder whose inbox holds a delivery done with: the second delivery carried fails (an id
        // a folder cannot keep), and the inbox is cut back to what it was
        sql(db, "UPDATE deliveries SET id = 'not a file name' WHERE id = 'ping-4'");
        Path back = tmp.resolve("back");
        FileDeliveryQueue there = new FileDeliveryQueue(back.resolve("inbox"), clock);
        there.accept("old-1", "ping", new byte[] {1}, "");
        there.done(there.queued().get(0));
        there.close();
        java.util.Map<Path, String> before = files(back.resolve("inbox"));
        Run into = cwd.cli("store", "copy", "--from", db.url(), "--to", "files:" + back);
        assertEquals(1, into.code(), into.out() + into.err());
        assertTrue(into.err().contains("carrying the deliveries to files:" + back + " failed: invalid delivery id "
                + "'not a file name'") && into.err().contains("removed again"), into.err());
        assertEquals(before, files(back.resolve("inbox")), "the inbox as it was");
        assertFalse(Files.exists(back.resolve("repos/acme/shop/.agentx/state/clarifications/issue-42.json")));

        // an inbox whose journal is damaged before its end: nothing is copied
        Path journal = data.resolve("inbox/journal");
        byte[] bytes = Files.readAllBytes(journal);
        bytes[10] ^= 1;
        Files.write(journal, bytes);
        TestPostgres.Database other = TestPostgres.newDatabase();
        Run damaged = cwd.cli("store", "copy", "--from", "files:" + data, "--to", other.url());
        assertEquals(1, damaged.code(), damaged.out() + damaged.err());
        assertTrue(damaged.err().contains("the deliveries of files:" + data + " cannot be read: ")
                && damaged.err().contains("nothing was copied"), damaged.err());
        assertEquals(0, rows(other, "SELECT count(*) FROM ledgers") + rows(other, "SELECT count(*) FROM deliveries"));
    }

    private static String text(TestPostgres.Database db, String query) throws Exception {
        try (java.sql.Connection c = db.dataSource().getConnection(); java.sql.Statement s = c.createStatement();
                java.sql.ResultSet r = s.executeQuery(query)) {
            r.next();
            return r.getString(1);
        }
    }

    private static long rows(TestPostgres.Database db, String query) throws Exception {
        try (java.sql.Connection c = db.dataSource().getConnection(); java.sql.Statement s = c.createStatement();
                java.sql.ResultSet r = s.executeQuery(query)) {
            r.next();
            return r.getLong(1);
        }
    }

    @Test
    void aRepoWithoutTheDatabaseIsAUsageError() {
        Run r = shop.cli("clarify", "--repo", "acme/shop");
        assertEquals(2, r.code(), r.out() + r.err());
        assertTrue(r.err().contains("give --database-url with it"), r.err());
    }

    /** A store a server is running on is not copied from or to: the copy would not be of one state. */
    @Test
    void aStoreARunningServerHoldsIsRefused() throws Exception {
        TestPostgres.Database db = TestPostgres.newDatabase();
        try (AutoCloseable server = dev.agentx.clarify.store.files.DataDirectory.lockForServer(data)) {
            Run refused = cwd.cli("store", "copy", "--from", "files:" + data, "--to", db.url());
            assertEquals(2, refused.code(), refused.err());
            assertTrue(refused.err().contains("files:" + data + " is in use by agentx serve (pid "
                    + ProcessHandle.current().pid() + "): stop it first"), refused.err());
            assertEquals("", refused.out(), "no heading for a copy that does not begin");
        }
        Run copy = ok(cwd, "store", "copy", "--from", "files:" + data, "--to", db.url());
        assertTrue(copy.out().startsWith("Copying files:" + data + " to "), copy.out());
        try (dev.agentx.clarify.store.postgres.PostgresDatabase server = dev.agentx.clarify.store.postgres
                .PostgresDatabase.open(dev.agentx.clarify.store.postgres.DatabaseUrl.parse(db.url(),
                        java.util.Map.of()), 2)) {
            server.beat("host-a-1234");
            Run refused = cwd.cli("store", "copy", "--from", db.url(), "--to", "files:" + tmp.resolve("out"));
            assertEquals(2, refused.code(), refused.err());
            assertTrue(refused.err().contains("is in use by running agentx serve replica host-a-1234 (its heartbeat "),
                    refused.err());
            assertEquals("", refused.out(), "no heading for a copy that does not begin");
            server.leave("host-a-1234"); // a server that stops says so
            ok(cwd, "store", "copy", "--from", db.url(), "--to", "files:" + tmp.resolve("out"));
        }
    }

    /**
     * A repository the database holds nothing of (a typo) is refused with what it holds, not read as
     * one with nothing open; GitHub's names are not case sensitive, so neither is --repo. A password
     * in a URL quoted back in an error is not shown.
     */
    @Test
    void aReadCommandNamesTheRepositoriesWhenItsRepoIsNotThereAndNeverShowsThePassword() {
        TestPostgres.Database db = TestPostgres.newDatabase();
        ok(cwd, "store", "copy", "--from", "files:" + data, "--to", db.url());
        Run typo = cwd.cli("state", "--database-url", db.url(), "--repo", "acme/shp");
        assertEquals(2, typo.code(), typo.err());
        assertTrue(typo.err().contains("holds nothing of that repository; it holds acme/shop, acme/web."), typo.err());
        Run cased = ok(cwd, "clarify", "--database-url", db.url(), "--repo", "Acme/Shop");
        assertTrue(cased.out().contains("CLR-43-001"), cased.out());

        String secret = "postgresql://agentx:s3cr3t%21pw@127.0.0.1:1/agentx";
        for (List<String> args : List.of(List.of("clarify", "resolve", "CLR-43-001", "--database-url", secret),
                List.of("clarify", "--database-ur", secret), List.of("--json", "hook", "start", "--database-url", secret))) {
            Run r = cwd.cli(args.toArray(String[]::new));
            assertEquals(2, r.code(), r.err());
            assertFalse((r.out() + r.err()).contains("s3cr3t"), args + ": " + r.out() + r.err());
        }
    }

    /** A database that does not answer: a code saying so, not an internal error. */
    @Test
    void aReadCommandOnADatabaseThatDoesNotAnswerSaysSo() {
        Run r = cwd.cli("clarify", "--database-url", "postgresql://agentx@127.0.0.1:1/agentx");
        assertEquals(1, r.code(), r.err());
        assertTrue(r.err().startsWith("UNAVAILABLE: cannot connect to PostgreSQL at jdbc:postgresql://127.0.0.1:1/agentx "
                + "as agentx: Connection refused."), r.err());
        assertTrue(r.err().contains("Check the database URL"), r.err());
    }

    @Test
    void aReadCommandLeavesTheSchemaAsItIsAndRefusesOneItDoesNotKnow() throws Exception {
        TestPostgres.Database db = TestPostgres.newDatabase();
        Run none = cwd.cli("clarify", "--database-url", db.url());
        assertEquals(1, none.code(), none.err());
        assertTrue(none.err().contains("holds no agentx schema yet"), none.err());
        Run copyFromNothing = cwd.cli("store", "copy", "--from", db.url(), "--to", "files:" + tmp.resolve("out"));
        assertEquals(1, copyFromNothing.code(), copyFromNothing.err());
        assertEquals(List.of(), versions(db), "looking made no schema");

        ok(cwd, "store", "copy", "--from", "files:" + data, "--to", db.url()); // the destination is migrated
        List<String> current = versions(db);
        String latest = current.get(current.size() - 1);
        // as if the database were a migration behind: its latest migration recorded as an older one
        sql(db, "UPDATE flyway_schema_history SET version = '0', script = 'V0__older.sql' WHERE version = '"
                + latest + "'");
        List<String> older = versions(db);
        Run behind = cwd.cli("state", "--database-url", db.url(), "--repo", "acme/shop");
        assertEquals(1, behind.code(), behind.err());
        String before = current.size() > 1 ? current.get(current.size() - 2) : "0"; // the newest one left
        assertTrue(behind.err().contains("is at version " + before + "; this agentx reads version " + latest
                + ". The server of this version brings it up to date"), behind.err());
        assertEquals(older, versions(db), "not migrated by a read");

        sql(db, "INSERT INTO flyway_schema_history (installed_rank, version, description, type, script, checksum, "
                + "installed_by, execution_time, success) VALUES (98, '" + latest + "', 'back', 'SQL', 'V" + latest
                + "__back.sql', 0, 'test', 1, true), (99, '999', 'newer', 'SQL', 'V999__newer.sql', 0, 'test', 1, true)");
        Run newer = cwd.cli("clarify", "--database-url", db.url(), "--repo", "acme/shop");
        assertEquals(1, newer.code(), newer.err());
        assertTrue(newer.err().contains("is at version 999, made by a newer agentx"), newer.err());

        sql(db, "DELETE FROM flyway_schema_history WHERE version = '999'");
        Run now = cwd.cli("clarify", "--database-url", db.url(), "--repo", "acme/shop");
        assertEquals(0, now.code(), now.err());
        assertTrue(now.out().contains("CLR-43-001"), now.out());
    }

    /**
     * A schema a newer agentx made is refused by every writer too, as by the readers and before
     * anything is written to it: {@code agentx serve} exits 1 instead of serving, and so do a copy
     * to it and the store opened to write.
     */
    @Test
    void aSchemaANewerAgentxMadeIsRefusedByEveryWriterBeforeAnythingIsWritten() throws Exception {
        TestPostgres.Database db = TestPostgres.newDatabase();
        db.open(1).close();
        List<String> current = versions(db);
        String latest = current.get(current.size() - 1);
        sql(db, "INSERT INTO flyway_schema_history (installed_rank, version, description, type, script, checksum, "
                + "installed_by, execution_time, success) VALUES (99, '999', 'newer', 'SQL', 'V999__newer.sql', 0, "
                + "'test', 1, true)");
        List<String> newer = versions(db);
        String refused = "is at version 999, made by a newer agentx; this one reads version " + latest + ". This "
                + "agentx writes nothing to it, and nothing was changed in it: run the agentx that made it (or a newer "
                + "one).";

        Path key = tmp.resolve("app.pem");
        Files.writeString(key, dev.agentx.clarify.github.support.Keys.pkcs1Pem());
        java.util.Map<String, String> env = java.util.Map.of("GITHUB_APP_ID", "1", "GITHUB_APP_PRIVATE_KEY_FILE",
                key.toString(), "GITHUB_WEBHOOK_SECRET", "s3cret", "GITHUB_API_URL", "http://127.0.0.1:1",
                "AGENTX_DATA_DIR", tmp.resolve("server").toString(), "AGENTX_DATABASE_URL", db.url(), "PORT", "0",
                "AGENTX_MANAGEMENT_PORT", "0", "AGENTX_REDELIVERY_INTERVAL", "0");
        Run serve = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(60),
                () -> cwd.cli(env, "serve"), "agentx serve refuses at its start instead of serving");
        assertEquals(1, serve.code(), serve.err());
        assertTrue(serve.err().contains(refused), serve.err());

        Run copy = cwd.cli("store", "copy", "--from", "files:" + data, "--to", db.url());
        assertEquals(1, copy.code(), copy.out() + copy.err());
        assertTrue(copy.err().contains(refused), copy.err());
        assertEquals("", copy.out(), "no heading for a copy that does not begin");
        dev.agentx.clarify.protocol.ClarifyException opened = org.junit.jupiter.api.Assertions.assertThrows(
                dev.agentx.clarify.protocol.ClarifyException.class, () -> db.open(2));
        assertTrue(opened.getMessage().contains(refused), opened.getMessage());

        assertEquals(newer, versions(db), "no migration ran");
        assertEquals(0, rows(db, "SELECT count(*) FROM replica_beats") + rows(db, "SELECT count(*) FROM ledgers")
                + rows(db, "SELECT count(*) FROM events") + rows(db, "SELECT count(*) FROM deliveries"),
                "nothing written");
    }

    /** The schema versions applied to {@code db}, oldest first; none when it has no history table. */
    private static List<String> versions(TestPostgres.Database db) throws Exception {
        try (java.sql.Connection c = db.dataSource().getConnection(); java.sql.Statement s = c.createStatement()) {
            try (java.sql.ResultSet r = s.executeQuery("SELECT to_regclass('flyway_schema_history') IS NOT NULL")) {
                r.next();
                if (!r.getBoolean(1)) {
                    return List.of();
                }
            }
            List<String> out = new java.util.ArrayList<>();
            try (java.sql.ResultSet r = s.executeQuery("SELECT version FROM flyway_schema_history WHERE version IS NOT "
                    + "NULL ORDER BY installed_rank")) {
                while (r.next()) {
                    out.add(r.getString(1));
                }
            }
            return out;
        }
    }

    private static void sql(TestPostgres.Database db, String statement) throws Exception {
        try (java.sql.Connection c = db.dataSource().getConnection(); java.sql.Statement s = c.createStatement()) {
            s.execute(statement);
        }
    }

    @Test
    void badStoresAreUsageErrorsThatSayWhatToGive() {
        Run notAStore = cwd.cli("store", "copy", "--from", "/var/lib/agentx", "--to", "postgresql://u:secret@h/db");
        assertEquals(2, notAStore.code());
        assertTrue(notAStore.err().contains("neither files:DIR"), notAStore.err());
        Run noDatabase = cwd.cli("store", "copy", "--from", "files:" + data, "--to", "postgresql://u:secret@h");
        assertEquals(2, noDatabase.code());
        assertTrue(noDatabase.err().contains("names no database"), noDatabase.err());
        assertTrue(!noDatabase.err().contains("secret"), "the password is never shown: " + noDatabase.err());
        Run empty = cwd.cli("store", "copy", "--from", "files:" + tmp.resolve("nothing"), "--to", "files:" + tmp);
        assertEquals(3, empty.code(), empty.err());
        assertTrue(empty.err().contains("holds no repository state"), empty.err());
    }

    private static String[] concat(List<String> a, String... b) {
        String[] out = new String[a.size() + b.length];
        for (int i = 0; i < a.size(); i++) {
            out[i] = a.get(i);
        }
        System.arraycopy(b, 0, out, a.size(), b.length);
        return out;
    }

}
