package dev.agentx.clarify.ledger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.protocol.Autonomy;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import dev.agentx.clarify.support.DamagedStateFiles;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

class LedgerCodecTest {
    final LedgerCodec codec = new LedgerCodec();

    @Property(tries = 300)
    void anyLedgerSurvivesTheRoundTrip(@ForAll("ledgers") Ledger ledger) {
        byte[] bytes = codec.encode(ledger);
        assertEquals(ledger, codec.decode(bytes));
        assertEquals(new String(bytes, StandardCharsets.UTF_8), new String(codec.encode(codec.decode(bytes)),
                StandardCharsets.UTF_8), "stable encoding");
    }

    @Provide
    Arbitrary<Ledger> ledgers() {
        Arbitrary<String> text = Arbitraries.strings().ofMinLength(1).ofMaxLength(60)
                .withChars("abc XYZ\n\t\"\\/{}[]:,\u00e9\u4e2d\ud83d\ude00<>@#");
        Arbitrary<Instant> when = Arbitraries.longs().between(0, 4_000_000_000_000L).map(Instant::ofEpochMilli);
        Arbitrary<Integer> choice = Arbitraries.integers().between(0, 3).injectNull(0.6);
        Arbitrary<Boolean> proposed = Arbitraries.of(true).injectNull(0.7);
        Arbitrary<String> maybe = text.injectNull(0.7);
        Arbitrary<ThreadEntry> plain = Combinators.combine(Arbitraries.integers().between(1, 6), text,
                Arbitraries.of(EntryType.class), text, when).as(ThreadEntry::new);
        Arbitrary<ThreadEntry> entry = Combinators.combine(plain, choice, proposed, maybe, maybe, maybe)
                .as((e, c, pr, acc, oq, req) -> new ThreadEntry(e.round(), e.from(), e.type(), e.body(), e.timestamp(),
                        c, pr, acc, oq, req));
        Arbitrary<List<ThreadEntry>> threads = entry.list().ofMaxSize(8);
        Arbitrary<List<String>> options = text.list().ofMaxSize(3);
        Arbitrary<Status> status = Arbitraries.of(Status.class);
        Arbitrary<Autonomy> autonomy = Arbitraries.of(Autonomy.class).injectNull(0.5);
        return Combinators.combine(Arbitraries.integers().between(1, 100_000), status.list().ofMaxSize(5),
                threads, options, when, text, Arbitraries.of(true, false), autonomy).as((issue, statuses, thread, opts, t,
                s, b, a) -> {
                    List<ClarificationRecord> records = new ArrayList<>();
                    for (int i = 0; i < statuses.size(); i++) {
                        records.add(new ClarificationRecord(String.format("CLR-%d-%03d", issue, i + 1), "engineer",
                                "architect", s, b, statuses.get(i), 1 + i, 5, t, t.plusSeconds(60),
                                statuses.get(i).terminal() ? t : null, opts, thread, a));
                    }
                    return new Ledger(issue, records);
                });
    }

    /**
     * A write or read from a base (the ledger as last read or written) reuses the base's bytes for
     * the records kept at the start and the end: whatever changed in between, the bytes written are
     * those of a whole encoding, and what is read is what a whole decoding reads.
     */
    @Property(tries = 300)
    void fromABaseTheBytesAndTheLedgerAreThoseOfTheWhole(@ForAll("ledgers") Ledger base, @ForAll("ledgers") Ledger donors,
                                                         @ForAll int from, @ForAll int to, @ForAll int appended,
                                                         @ForAll boolean compact) {
        Ledger next = edited(base, donors, from, to, appended);
        LedgerCodec.Encoded whole = codec.decode(codec.encode(next), null, null);
        LedgerCodec.Encoded written = codec.encode(next, codec.encode(base, null));
        assertEquals(new String(whole.bytes(), StandardCharsets.UTF_8), new String(written.bytes(), StandardCharsets.UTF_8));
        assertArrayEquals(whole.ends(), written.ends());
        // read as another process reads it, from its own base; also of a file another tool wrote compactly
        byte[] baseBytes = compact ? compact(codec.encode(base)) : codec.encode(base);
        byte[] nextBytes = compact ? compact(codec.encode(next)) : codec.encode(next);
        LedgerCodec.Encoded read = codec.decode(nextBytes, null, codec.decode(baseBytes, null, null));
        assertEquals(next, read.ledger());
        assertArrayEquals(codec.decode(nextBytes, null, null).ends(), read.ends());
    }

    /** A file damaged anywhere reads from a base exactly as without one: the same ledger or the same problem. */
    @Property(tries = 500)
    void aDamagedFileReadsFromABaseAsWithout(@ForAll("ledgers") Ledger base, @ForAll("ledgers") Ledger donors,
                                            @ForAll int at, @ForAll("damage") byte b) {
        byte[] bytes = codec.encode(edited(base, donors, 1, 2, 1));
        bytes[Math.floorMod(at, bytes.length)] = b;
        LedgerCodec.Encoded known = codec.decode(codec.encode(base), null, null);
        Object whole;
        try {
            whole = codec.decode(bytes, null, null).ledger();
        } catch (IllegalArgumentException e) {
            whole = e.getMessage();
        }
        Object fromBase;
        try {
            fromBase = codec.decode(bytes, null, known).ledger();
        } catch (IllegalArgumentException e) {
            fromBase = e.getMessage();
        }
        assertEquals(whole, fromBase);
    }

    @Provide
    Arbitrary<Byte> damage() {
        return Arbitraries.of((byte) '"', (byte) '}', (byte) ']', (byte) ',', (byte) ' ', (byte) 'x', (byte) '1',
                (byte) '{', (byte) 0xC3);
    }

    /**
     * {@code base} with its records from {@code from} to {@code to} (taken modulo its size) given the
     * contents of {@code donors}' records, and up to 3 new records appended.
     */
    private static Ledger edited(Ledger base, Ledger donors, int from, int to, int appended) {
        List<ClarificationRecord> records = new ArrayList<>(base.clarifications());
        int n = records.size();
        int lo = n == 0 ? 0 : Math.floorMod(from, n);
        int hi = n == 0 ? 0 : lo + Math.floorMod(to, n - lo + 1);
        List<ClarificationRecord> d = donors.clarifications();
        for (int i = lo; i < hi && !d.isEmpty(); i++) {
            records.set(i, renamed(d.get(i % d.size()), records.get(i).id()));
        }
        for (int i = 0; i < Math.floorMod(appended, 4) && !d.isEmpty(); i++) {
            records.add(renamed(d.get(i % d.size()), String.format("CLR-%d-%03d", base.issueNumber(), n + i + 1)));
        }
        return new Ledger(base.issueNumber(), records);
    }

    private static ClarificationRecord renamed(ClarificationRecord r, String id) {
        return new ClarificationRecord(id, r.from(), r.to(), r.topic(), r.blocking(), r.status(), r.round(),
                r.maxRounds(), r.created(), r.staleAfter(), r.resolvedAt(), r.options(), r.thread(), r.autonomy(),
                r.reaskedAt());
    }

    /** The same JSON with no white space between tokens, as another tool may write it. */
    private static byte[] compact(byte[] json) {
        com.fasterxml.jackson.core.JsonFactory f = new com.fasterxml.jackson.core.JsonFactory();
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        try (com.fasterxml.jackson.core.JsonParser p = f.createParser(json);
             com.fasterxml.jackson.core.JsonGenerator g = f.createGenerator(out)) {
            p.nextToken();
            g.copyCurrentStructure(p);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    @Test
    void strictReadingNamesTheProblemAndWhere() {
        assertProblem("{\"issueNumber\":1,\"clarifications\":[],\"extra\":1}", "unknown field 'extra'");
        assertProblem("{\"issueNumber\":1}", "'clarifications' are required");
        assertProblem("{\"issueNumber\":1,\"issueNumber\":2,\"clarifications\":[]}", "Duplicate field 'issueNumber'");
        assertProblem("{\"issueNumber\":\"1\",\"clarifications\":[]}", "'issueNumber' must be an integer");
        assertProblem("[]", "must hold one JSON object");
        assertProblem("{\"issueNumber\":1,\"clarifications\":[{\"id\":\"CLR-1-001\"}]}", "lacks field 'from'");
        String rec = "{\"issueNumber\":1,\"clarifications\":[{\"id\":\"CLR-1-001\",\"from\":\"a\",\"to\":\"b\",\"topic\":\"t\","
                + "\"blocking\":true,\"status\":\"%s\",\"round\":1,\"maxRounds\":5,\"created\":\"%s\","
                + "\"staleAfter\":\"2026-01-01T00:00:00Z\",\"resolvedAt\":null,\"thread\":[]}]}";
        assertProblem(String.format(rec, "waiting", "2026-01-01T00:00:00Z"), "unknown status 'waiting'");
        assertProblem(String.format(rec, "pending", "yesterday"), "must be an ISO-8601 instant");
        assertProblem(String.format(rec, "pending", "2026-01-01T00:00:00Z").replace("CLR-1-001", "CLR-2-001"),
                "belongs to issue 2");
        assertProblem("{\"issueNumber\":1,\n\"clarifications\":[", "line 2");
        Ledger ok = codec.decode(String.format(rec, "pending", "2026-01-01T00:00:00Z").getBytes(StandardCharsets.UTF_8));
        assertEquals(Status.PENDING, ok.clarifications().get(0).status());
    }

    private void assertProblem(String json, String expected) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> codec.decode(json.getBytes(StandardCharsets.UTF_8)));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    /**
     * Every damaged ledger of {@link DamagedStateFiles} reads as it did: the same ledger written
     * back byte for byte, or the same problem at the same line and column; read leniently, the
     * same fields skipped.
     */
    @Test
    void aDamagedLedgerReadsAsTheCasesSay() {
        List<String> wrong = new ArrayList<>();
        List<DamagedStateFiles.Case> cases = DamagedStateFiles.of("ledger");
        for (DamagedStateFiles.Case c : cases) {
            String strict = read(c.bytes(), null);
            String lenient = read(c.bytes(), new TreeSet<>());
            if (!strict.equals(c.read()) || !lenient.equals(c.lenient())) {
                wrong.add(c + "\n  expected " + c.read() + " | " + c.lenient() + "\n  got      " + strict + " | " + lenient);
            }
        }
        assertTrue(cases.size() > 2000, "cases: " + cases.size());
        assertEquals(List.of(), wrong);
    }

    private String read(byte[] bytes, Set<String> unknown) {
        try {
            String ok = "OK " + DamagedStateFiles.digest(codec.encode(codec.decode(bytes, unknown)));
            return unknown == null ? ok : ok + " " + unknown;
        } catch (IllegalArgumentException e) {
            return "ERR " + e.getMessage();
        }
    }
}
