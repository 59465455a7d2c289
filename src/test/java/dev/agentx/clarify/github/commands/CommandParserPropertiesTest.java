package dev.agentx.clarify.github.commands;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import dev.agentx.clarify.render.MarkdownRenderer;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** Properties of {@link CommandParser}: total, and blind to code, quotes, comments and app comments. */
class CommandParserPropertiesTest {
    private static final Instant T = Instant.parse("2026-02-26T10:00:00Z");

    /** Pieces that matter to the parser, glued together at random. */
    private static final String[] PIECES = {"/clarify", "/CLARIFY", " @architect", " @pm", " answer", " followup",
        " resolve", " CLR-1-001", " CLR-", " --topic", " \"q\"", " \"", " --non-blocking", "\n", "\r", "\r\n",
        "```", "~~~", "````", "<!--", "-->", ">", " > ", "    ", "\t", "`", "\u2028", "\u0085", "x", " ", "?",
        "\\", "\u0000", "\uD83D\uDE00", "\uD800", "@", "&", "<", "*"};

    private static Arbitrary<String> mixed() {
        Arbitrary<String> piece = Arbitraries.oneOf(Arbitraries.of(PIECES), Arbitraries.strings().ofMaxLength(6));
        return piece.list().ofMaxSize(60).map(l -> String.join("", l));
    }

    @Provide
    Arbitrary<String> anyText() {
        return Arbitraries.oneOf(mixed(), Arbitraries.strings().ofMaxLength(200),
                Arbitraries.strings().withChars("/clarify@ \n`~<!->\t").ofMaxLength(200));
    }

    /** Lines that look like commands, or are plain text: never a fence, quote or comment delimiter. */
    private static Arbitrary<String> innerLine() {
        return Arbitraries.oneOf(
                Arbitraries.of("/clarify @architect Which one?", "/clarify answer CLR-1-001 yes", "/clarify status",
                        "  /clarify help", "/CLARIFY resolve CLR-1-001", "/clarify @pm --topic \"t\" Q"),
                Arbitraries.strings().alpha().numeric().withChars(" ?.,/@").ofMaxLength(30));
    }

    private static Arbitrary<List<String>> innerLines() {
        return innerLine().list().ofMinSize(1).ofMaxSize(8);
    }

    private static Arbitrary<String> filler() {
        return Arbitraries.strings().alpha().numeric().withChars(" .,").ofMaxLength(30).list().ofMaxSize(3)
                .map(l -> String.join("\n", l));
    }

    /** A block of command lines wrapped so that none of them may count. */
    @Provide
    Arbitrary<String> wrapped() {
        Arbitrary<String> fenced = Combinators.combine(Arbitraries.of("```", "~~~", "````", "   ```"),
                Arbitraries.of("", "java", " text"), innerLines()).as((f, info, l) ->
                f + info + "\n" + String.join("\n", l) + "\n" + f.strip());
        Arbitrary<String> unclosed = innerLines().map(l -> "```\n" + String.join("\n", l));
        Arbitrary<String> quoted = Combinators.combine(Arbitraries.of(">", "> ", " > ", "   >", "> > "), innerLines())
                .as((q, l) -> String.join("\n", l.stream().map(x -> q + x).toList()));
        Arbitrary<String> comment = innerLines().map(l -> "<!--\n" + String.join("\n", l) + "\n-->");
        Arbitrary<String> oneLineComment = innerLine().map(x -> "<!-- " + x + " -->");
        Arbitrary<String> indented = Combinators.combine(Arbitraries.of("    ", "\t", "     ", "  \t"), innerLines())
                .as((i, l) -> String.join("\n", l.stream().map(x -> i + x).toList()));
        // non-blank inside: empty inline code like ```` is a fence opener in CommonMark, not inline code
        Arbitrary<String> inline = Combinators.combine(Arbitraries.of("`", "text `", "``"),
                        innerLine().filter(x -> !x.isBlank()))
                .as((q, x) -> q + x.strip() + q.strip().replace("text", ""));
        Arbitrary<String> block = Arbitraries.oneOf(fenced, unclosed, quoted, comment, oneLineComment, indented,
                inline);
        return Combinators.combine(filler(), block, filler()).as((a, b, c) -> (a.isEmpty() ? "" : a + "\n") + b
                + (c.isEmpty() ? "" : "\n" + c));
    }

    @Property(tries = 1000)
    void parsingNeverThrowsAndEveryCommandStartsItsLine(@ForAll("anyText") String body) {
        List<CommentCommand> commands = CommandParser.parse(body);
        for (CommentCommand c : commands) {
            assertTrue(c.source().toLowerCase(Locale.ROOT).startsWith("/clarify"), c.source());
        }
        assertTrue(commands.size() <= body.split("\r\n|\r|\n", -1).length);
    }

    @Property(tries = 1000)
    void nothingInCodeQuotesCommentsOrInlineCodeIsACommand(@ForAll("wrapped") String body) {
        assertEquals(List.of(), CommandParser.parse(body), body);
    }

    @Property(tries = 500)
    void aCommandAfterAClosedBlockStillCounts(@ForAll("wrapped") String body) {
        if (body.contains("```\n") && body.indexOf("```") == body.lastIndexOf("```")) {
            return; // an unclosed fence runs to the end of the comment
        }
        List<CommentCommand> c = CommandParser.parse(body + "\n\n/clarify @architect After?");
        assertEquals(1, c.size(), body);
        assertEquals("After?", ((CommentCommand.Ask) c.get(0)).question());
    }

    private static ClarificationRecord record(String topic, String question) {
        return new ClarificationRecord("CLR-42-001", "engineer", "architect", topic, true, Status.PENDING, 1, 5,
                T, T.plusSeconds(1800), null, List.of(topic, question),
                List.of(new ThreadEntry(1, "engineer", EntryType.QUESTION, question, T)));
    }

    @Property(tries = 1000)
    void aRenderedAppCommentNeverParsesIntoACommand(@ForAll("anyText") String topic, @ForAll("anyText") String text) {
        String q = text.isBlank() ? "q" : text;
        String t = topic.isBlank() ? "t" : topic;
        MarkdownRenderer md = new MarkdownRenderer();
        ClarificationRecord r = record(t, q);
        List<String> rendered = new ArrayList<>();
        rendered.add(md.entry(r, 0, List.of("octocat")));
        ClarificationRecord a = r.with(Status.ANSWERED, new ThreadEntry(1, "architect", EntryType.ANSWER, q, T));
        rendered.add(md.entry(a, 1, List.of()));
        ClarificationRecord e = a.with(Status.ESCALATED, new ThreadEntry(1, "agentx", EntryType.ESCALATION, q, T));
        rendered.add(md.entry(e, 2, List.of()));
        rendered.add(md.stale(r, List.of("octocat")));
        rendered.add(md.thread(e));
        rendered.add(MarkdownRenderer.quote(q));
        rendered.add(MarkdownRenderer.inline(q));
        for (String comment : rendered) {
            assertEquals(List.of(), CommandParser.parse(comment), comment);
        }
    }
}
