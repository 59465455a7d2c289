package dev.agentx.clarify.render;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.commonmark.ext.gfm.tables.TablesExtension;
import org.commonmark.node.AbstractVisitor;
import org.commonmark.node.Code;
import org.commonmark.node.FencedCodeBlock;
import org.commonmark.node.HtmlBlock;
import org.commonmark.node.HtmlInline;
import org.commonmark.node.Node;
import org.commonmark.node.Text;
import org.commonmark.parser.Parser;
import org.junit.jupiter.api.Test;

/**
 * User text in comments, read back as GitHub reads Markdown (a CommonMark parser with GFM
 * tables): code shows as written, and nothing outside code is HTML or a mention, whatever the
 * text and wherever a long comment is cut.
 */
class UserTextTest {
    private static final Parser GITHUB = Parser.builder().extensions(List.of(TablesExtension.create())).build();
    /** A mention GitHub would link: an @ followed by a login's first character. */
    private static final Pattern MENTION = Pattern.compile("@[A-Za-z0-9]");

    /** What GitHub would make of a comment: its text, its code and its HTML. */
    record Read(List<String> text, List<String> code, List<String> html) {
    }

    static Read read(String markdown) {
        List<String> text = new ArrayList<>();
        List<String> code = new ArrayList<>();
        List<String> html = new ArrayList<>();
        GITHUB.parse(markdown).accept(new AbstractVisitor() {
            @Override
            public void visit(Text t) {
                text.add(t.getLiteral());
            }

            @Override
            public void visit(Code c) {
                code.add(c.getLiteral());
            }

            @Override
            public void visit(FencedCodeBlock f) {
                code.add(f.getLiteral());
            }

            @Override
            public void visit(HtmlInline h) {
                html.add(h.getLiteral());
            }

            @Override
            public void visit(HtmlBlock h) {
                html.add(h.getLiteral());
            }
        });
        return new Read(text, code, html);
    }

    /** A comment as the renderer lays user text out: the topic inline, the body quoted, text after. */
    static String comment(String topic, String body) {
        return "**Clarification CLR-7-001** - round 1 of 5\n\n**engineer** asks **architect** about: "
                + UserText.inline(topic) + "\n\n" + UserText.quote(body) + "\n\nAnswer with the answer command.\n";
    }

    static void assertSafe(String markdown) {
        Read r = read(markdown);
        assertEquals(List.of(), r.html(), "no HTML outside code in:\n" + markdown);
        for (String t : r.text()) {
            assertTrue(!MENTION.matcher(t).find(), "no mention in text '" + t + "' of:\n" + markdown);
        }
    }

    @Test
    void codeSpansShowAsWrittenAndTheRestIsEscaped() {
        String body = "Use `List<String>` and `@Transactional` here, @bob <b>?";
        assertEquals("> Use `List<String>` and `@Transactional` here, @&#8203;bob &lt;b&gt;?", UserText.quote(body));
        Read r = read(comment("The `Map<K, V>` in `@Bean`", body));
        assertEquals(List.of("Map<K, V>", "@Bean", "List<String>", "@Transactional"), r.code());
        assertSafe(comment("The `Map<K, V>` in `@Bean`", body));
    }

    @Test
    void aFencedBlockShowsAsWrittenToItsClosingFence() {
        String body = "Like this:\n```java\n@Bean List<String> x() { return a && b; }\n```\nthen @bob <!-- x -->";
        assertEquals("> Like this:\n> ```java\n> @Bean List<String> x() { return a && b; }\n> ```\n"
                + "> then @&#8203;bob &lt;!-- x --&gt;", UserText.quote(body));
        assertEquals(List.of("@Bean List<String> x() { return a && b; }\n"), read(comment("t", body)).code());
        // never closed: it runs to the end of the quote, as on GitHub
        String open = "~~~~\n<!-- @bob\n~~~";
        assertEquals("> ~~~~\n> <!-- @bob\n> ~~~", UserText.quote(open));
        assertEquals(List.of("<!-- @bob\n~~~\n"), read(comment("t", open)).code());
        assertSafe(comment("t", open));
    }

    @Test
    void whereGitHubMayReadItOtherwiseNothingIsTakenForCode() {
        // a backtick left open could pair with one on the next line: then no span is certain
        assertEquals("> a ` b\n> `@&#8203;x` &lt;!--", UserText.quote("a ` b\n`@x` <!--"));
        // a fence indented in a list item ends at the next line that is less indented; one indented
        // at the top is closed by a fence at the first column, which would seem to open one
        assertEquals("> - x\n>   ```\n> @&#8203;everyone", UserText.quote("- x\n  ```\n@everyone"));
        assertEquals("> a\n>   ```\n> @&#8203;x\n> ```\n> &lt;!-- hidden",
                UserText.quote("a\n  ```\n@x\n```\n<!-- hidden"));
        // a table splits its cells before it looks for spans
        assertEquals("> | `a|@&#8203;b` |", UserText.quote("| `a|@b` |"));
        // an escaped backtick opens nothing
        assertEquals("> \\`@&#8203;x\\`", UserText.quote("\\`@x\\`"));
        assertEquals("*\\*`a*b`\\**", UserText.inline("*`a*b`*"));
        assertSafe(comment("a ` b", "- x\n  ```\n@everyone\n| `a|@b` |\n|---|\n| `@c` |"));
    }

    @Test
    void aCutNeverLeavesASpanOpen() {
        String line = "> see `<!-- @bob -->` there";
        int inside = line.indexOf("@bob");
        assertEquals(line.indexOf('`'), UserText.cutBeforeOpenSpan(line, inside));
        assertEquals(line.length(), UserText.cutBeforeOpenSpan(line, line.length()));
        String text = comment("t", "see `<!-- @bob -->` there" + " and more".repeat(20));
        for (int max = text.indexOf("see"); max < text.indexOf("there") + noteLength(text); max++) {
            String cut = CommentLimit.cut(text, max);
            assertSafe(cut);
            assertTrue(!cut.contains("`<!--") || cut.contains("`<!-- @bob -->`"), "the span whole or not at all: " + cut);
        }
    }

    /** The length of the note a cut of {@code text} ends with. */
    static int noteLength(String text) {
        return ("\n\n*[... " + String.format("%,d", text.length()) + " more characters not shown]*").length();
    }

    /**
     * Lines of Markdown that change how GitHub reads them: each an indent or a block's marker,
     * maybe a fence, then pieces that matter inline.
     */
    @Provide
    Arbitrary<String> markdownish() {
        Arbitrary<String> start = Arbitraries.of("", "", " ", "  ", "   ", "    ", "\t", " \t", "- ", "  - ", "1. ", "> ",
                "# ", "|");
        Arbitrary<String> fence = Arbitraries.of("", "", "", "```", "````", "~~~", "``", "```a`");
        Arbitrary<String> piece = Arbitraries.of("`", "``", "@x", "<!--", "-->", "<b>", "|", "\\", "*", " ", "a",
                "&lt;", "[a]: /u \"", "\"", "|---|", "```");
        Arbitrary<String> line = net.jqwik.api.Combinators.combine(start, fence, piece.list().ofMaxSize(5))
                .as((s, f, p) -> s + f + String.join("", p));
        return line.list().ofMinSize(1).ofMaxSize(8).map(lines -> String.join("\n", lines));
    }

    /** Whole lines that open, close or sit in blocks, in any order. */
    @Provide
    Arbitrary<String> blocks() {
        return Arbitraries.of("```", "````", "~~~", " ```", "  ```", "   ~~~", "\t```", "    ```", "```a`b", "``` x",
                        "- x", "  - y", "1. z", "@x <!-- h -->", "`a` @x `b`", "a ` b", "| `c|@d` |", "|---|", "", "> q")
                .list().ofMinSize(1).ofMaxSize(10).map(lines -> String.join("\n", lines));
    }

    @Property(tries = 3000)
    void nothingOutsideCodeIsHtmlOrAMention(@ForAll("markdownish") String topic, @ForAll("markdownish") String body) {
        assertSafe(comment(topic, body.isBlank() ? "q" : body));
    }

    @Property(tries = 3000)
    void whateverTheBlocks(@ForAll("blocks") String body) {
        assertSafe(comment("topic", body.isBlank() ? "q" : body));
    }

    @Property(tries = 2000)
    void norWhereALongCommentIsCut(@ForAll("markdownish") String body, @ForAll @IntRange(min = 0, max = 999) int at) {
        String text = comment("topic", body.isBlank() ? "q" : body);
        int max = text.length() * at / 1000 + noteLength(text); // the cut falls anywhere in the comment
        assertSafe(CommentLimit.cut(text, max));
    }
}
