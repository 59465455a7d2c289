package dev.agentx.clarify.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class OptionsParserTest {
    @Test
    void aListUnderTheQuestionGivesItsOptions() {
        OptionsParser.Extracted e = OptionsParser.extract("""
                Which database should we use?
                We need it for the audit log.

                - PostgreSQL
                - SQLite
                """);
        assertEquals("Which database should we use?\nWe need it for the audit log.", e.question());
        assertEquals(List.of("PostgreSQL", "SQLite"), e.options());

        assertEquals(List.of("Development", "Staging (default)", "Production"), OptionsParser.extract("""
                Which environment?
                1. Development
                2) [x] Staging
                3. [ ] Production""").options());
        assertEquals(List.of("A", "B"), OptionsParser.extract("Pick one:\n* [ ] A\n+ [ ] B").options());
    }

    @Test
    void listsThatAreNotChoicesStayInTheQuestion() {
        for (String body : List.of(
                "- only a list\n- nothing above it",
                "Question?\n- a single item",
                "Question?\n- a\n- b\nand text after the list",
                "Question?\n" + "- x\n".repeat(11),
                "Plain question without a list")) {
            OptionsParser.Extracted e = OptionsParser.extract(body);
            assertEquals(List.of(), e.options(), body);
            assertEquals(body.strip(), e.question(), body);
        }
    }

    @Test
    void answersByNumberOrTextPickAnOption() {
        List<String> o = List.of("PostgreSQL", "SQLite (default)", "Both, but later");
        assertEquals(Optional.of(1), OptionsParser.choose(o, "2"));
        assertEquals(Optional.of(1), OptionsParser.choose(o, " #2 "));
        assertEquals(Optional.of(0), OptionsParser.choose(o, "1) because we already run it"));
        assertEquals(Optional.of(0), OptionsParser.choose(o, "option 1"));
        assertEquals(Optional.of(2), OptionsParser.choose(o, "3 - when we have time"));
        assertEquals(Optional.of(0), OptionsParser.choose(o, "postgresql"));
        assertEquals(Optional.of(1), OptionsParser.choose(o, "SQLite."));
        assertEquals(Optional.of(0), OptionsParser.choose(o, "PostgreSQL, because of JSONB"));
        assertEquals(Optional.of(2), OptionsParser.choose(o, "- [x] Both, but later"));
        assertEquals(Optional.empty(), OptionsParser.choose(o, "4"), "out of range");
        assertEquals(Optional.empty(), OptionsParser.choose(o, "2 weeks from now"), "a number in a sentence");
        assertEquals(Optional.empty(), OptionsParser.choose(o, "2.5"));
        assertEquals(Optional.empty(), OptionsParser.choose(o, "PostgreSQLite"));
        assertEquals(Optional.empty(), OptionsParser.choose(List.of(), "1"));
    }

    @Test
    void theDefaultIsTheMarkedOptionElseTheFirst() {
        assertEquals(1, OptionsParser.defaultIndex(List.of("a", "b (Default)")));
        assertEquals(0, OptionsParser.defaultIndex(List.of("a", "b")));
        assertEquals("b", OptionsParser.label("b (default)"));
    }
}
