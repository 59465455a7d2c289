package dev.agentx.clarify.files;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

class JsonErrorsTest {
    /** Jackson's own location inside its message reads as ours does, not as its source description. */
    @Test
    void aLocationInTheMessageIsALineAndColumn() {
        JsonProcessingException e = assertThrows(JsonProcessingException.class,
                () -> new ObjectMapper().readTree("{\"issueNumber\":2, \"clarifications\": ["));
        assertEquals("Unexpected end-of-input: expected close marker for Array (start marker at line 1, column 37) "
                + "(line 1, column 38)", JsonErrors.describe(e));
    }
}
