package dev.agentx.clarify.files;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** JsonNumbers agrees with jackson-core on every token: the same value, or the same refusal. */
class JsonNumbersTest {
    private static final JsonFactory JSON = new JsonFactory();

    /** What reading the single value {@code json} gives, through jackson-core or through JsonNumbers. */
    private static Object read(String json, boolean asLong, boolean ours) throws IOException {
        try (JsonParser p = JSON.createParser(json)) {
            p.nextToken();
            try {
                if (asLong) {
                    return ours ? JsonNumbers.longValue(p) : p.getLongValue();
                }
                return ours ? JsonNumbers.intValue(p) : p.getIntValue();
            } catch (IOException | RuntimeException e) {
                return e.getClass().getName() + ": " + e.getMessage();
            }
        }
    }

    @Test
    void agreesWithJacksonCore() throws IOException {
        List<String> cases = new ArrayList<>(List.of("0", "-0", "1", "-1", "7", "999999999", "1000000000", "-999999999",
                "-1000000000", "2147483647", "2147483648", "-2147483648", "-2147483649", "99999999999",
                "999999999999999999", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
                "-9223372036854775809", "1763856000123456789", "12345678901234567890", "1.5", "1e3", "-2.0",
                "\"12\"", "true", "null", "[1]", "{}"));
        Random random = new Random(42);
        for (int i = 0; i < 2000; i++) {
            long v = random.nextLong() >> random.nextInt(64);
            cases.add(Long.toString(v));
        }
        for (String json : cases) {
            for (boolean asLong : new boolean[] {false, true}) {
                assertEquals(read(json, asLong, false), read(json, asLong, true), json + (asLong ? " as long" : " as int"));
            }
        }
    }
}
