package dev.agentx.clarify.github.commands;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.agentx.clarify.github.commands.CommentCommand.Abandon;
import dev.agentx.clarify.github.commands.CommentCommand.Answer;
import dev.agentx.clarify.github.commands.CommentCommand.Ask;
import dev.agentx.clarify.github.commands.CommentCommand.Escalate;
import dev.agentx.clarify.github.commands.CommentCommand.FollowUp;
import dev.agentx.clarify.github.commands.CommentCommand.Help;
import dev.agentx.clarify.github.commands.CommentCommand.Invalid;
import dev.agentx.clarify.github.commands.CommentCommand.Resolve;
import dev.agentx.clarify.github.commands.CommentCommand.Status;
import java.util.List;
import org.junit.jupiter.api.Test;

class CommandParserTest {
    private static List<CommentCommand> parse(String... lines) {
        return CommandParser.parse(String.join("\n", lines));
    }

    @Test
    void askWithOptionsAndAMultiLineQuestion() {
        List<CommentCommand> c = parse("Hi all,", "/clarify @Architect --non-blocking --topic \"Auth \\\"method\\\"\" "
                + "JWT or", "sessions?", "", "Thanks");
        assertEquals(List.of(new Ask("/clarify @Architect --non-blocking --topic \"Auth \\\"method\\\"\" JWT or"
                + "\nsessions?\n\nThanks", "Architect", false, "Auth \"method\"", "JWT or\nsessions?\n\nThanks")), c);
    }

    @Test
    void everyVerbCaseInsensitiveAndSeveralPerComment() {
        List<CommentCommand> c = parse("/CLARIFY answer clr-4-001 Yes.", "/clarify Answer just this",
                "  /clarify followup CLR-4-001 And?", "/clarify resolve CLR-4-001", "/clarify escalate CLR-4-002 why",
                "/clarify abandon CLR-4-003 dropped\nfor now", "/clarify status", "/clarify HELP me");
        assertEquals(new Answer("/CLARIFY answer clr-4-001 Yes.", "CLR-4-001", "Yes."), c.get(0));
        assertEquals(new Answer("/clarify Answer just this", null, "just this"), c.get(1));
        assertEquals(new FollowUp("/clarify followup CLR-4-001 And?", "CLR-4-001", "And?"), c.get(2));
        assertEquals(new Resolve("/clarify resolve CLR-4-001", "CLR-4-001", null), c.get(3));
        assertEquals(new Escalate("/clarify escalate CLR-4-002 why", "CLR-4-002", "why"), c.get(4));
        assertEquals(new Abandon("/clarify abandon CLR-4-003 dropped\nfor now", "CLR-4-003", "dropped\nfor now"),
                c.get(5));
        assertInstanceOf(Status.class, c.get(6));
        assertInstanceOf(Help.class, c.get(7));
        assertEquals(8, c.size());
    }

    @Test
    void neverInCodeQuotesCommentsOrInlineCode() {
        assertEquals(List.of(), parse(
                "```", "/clarify @architect fenced", "```",
                "~~~~ text", "/clarify @architect tilde", "~~~~",
                "    /clarify @architect indented", "\t/clarify @architect tab",
                "> /clarify @architect quoted", " > > /clarify @architect nested",
                "<!--", "/clarify @architect in comment", "-->",
                "<!-- /clarify @architect --> /clarify @architect", "`/clarify @architect inline`",
                "text /clarify @architect mid-line", "/clarifying is not a command"));
    }

    @Test
    void aCommandAfterAClosedFenceOrCommentCounts() {
        List<CommentCommand> c = parse("```java", "code()", "```", "<!-- note -->", "/clarify @pm Q?");
        assertEquals(1, c.size());
        assertEquals("Q?", ((Ask) c.get(0)).question());
    }

    @Test
    void codeInsideAQuestionStaysPartOfIt() {
        List<CommentCommand> c = parse("/clarify @architect Is this right?", "```", "/clarify @pm not a command",
                "```");
        assertEquals(1, c.size());
        assertEquals("Is this right?\n```\n/clarify @pm not a command\n```", ((Ask) c.get(0)).question());
    }

    @Test
    void theSourceIsTheWholeCommandWithoutTrailingBlankLines() {
        List<CommentCommand> c = parse("   /clarify @architect Which DB", "  for the cache?", "", "```",
                "/clarify @pm in code", "```", "", "  ", "/clarify frobnicate now", "and then", "", "");
        assertEquals(2, c.size());
        assertEquals("/clarify @architect Which DB\n  for the cache?\n\n```\n/clarify @pm in code\n```",
                c.get(0).source());
        assertEquals("/clarify frobnicate now\nand then", c.get(1).source());
    }

    @Test
    void badSyntaxSaysWhy() {
        List<CommentCommand> c = parse("/clarify", "/clarify @architect", "/clarify followup 42 more?",
                "/clarify resolve", "/clarify frobnicate", "/clarify @pm --urgent Q", "/clarify answer CLR-4 x",
                "/clarify @pm --topic \"unterminated Q", "/clarify @arch,itect Q");
        assertEquals(9, c.size());
        c.forEach(x -> assertInstanceOf(Invalid.class, x, x.toString()));
        assertTrue(((Invalid) c.get(0)).problem().contains("missing"));
        assertTrue(((Invalid) c.get(1)).problem().contains("question is missing"));
        assertTrue(((Invalid) c.get(2)).problem().contains("CLR-42-001"));
        assertTrue(((Invalid) c.get(4)).problem().contains("'frobnicate' is not a /clarify command"));
        assertTrue(((Invalid) c.get(5)).problem().contains("--urgent"));
    }

    @Test
    void emptyAndWindowsLineEnds() {
        assertEquals(List.of(), CommandParser.parse(null));
        assertEquals(List.of(), CommandParser.parse("  "));
        assertEquals("a\nb", ((Ask) CommandParser.parse("/clarify @pm a\r\nb").get(0)).question());
    }

    @Test
    void acceptNeedsAnId() {
        assertEquals(List.of(new CommentCommand.Accept("/clarify accept clr-4-002", "CLR-4-002")),
                CommandParser.parse("/clarify accept clr-4-002"));
        assertInstanceOf(Invalid.class, CommandParser.parse("/clarify accept").get(0));
        assertInstanceOf(Invalid.class, CommandParser.parse("/clarify accept CLR-4").get(0));
    }
}
