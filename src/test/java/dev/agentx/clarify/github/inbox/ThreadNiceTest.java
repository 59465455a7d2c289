package dev.agentx.clarify.github.inbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class ThreadNiceTest {
    @Test
    void theNiceFieldIsFoundAfterACommandWithSpacesAndParentheses() {
        String stat = "4242 (agentx (w) 1) S 4200 4242 4200 0 -1 4194368 2406 0 0 0 3 1 0 0 24 4 21 0 "
                + "1138291 2958336 225 18446744073709551615 1 1 0 0 0 0 0 4096 17575 0 0 0 17 1 0 0 0 0 0";
        assertEquals(OptionalInt.of(4), ThreadNice.parse(stat));
        assertEquals(OptionalInt.of(-5), ThreadNice.parse(stat.replace(" 24 4 21 ", " 15 -5 21 ")));
    }

    @Test
    void anUnreadableLineGivesNothing() {
        assertEquals(OptionalInt.empty(), ThreadNice.parse(""));
        assertEquals(OptionalInt.empty(), ThreadNice.parse("4242 (agentx"));
        assertEquals(OptionalInt.empty(), ThreadNice.parse("4242 (agentx) S 1 2 3"));
        assertEquals(OptionalInt.empty(), ThreadNice.parse("4242 (agentx) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 x 17"));
    }

    @Test
    void onLinuxTheCallingThreadsNiceIsRead() {
        if (Files.isReadable(Path.of("/proc/thread-self/stat"))) {
            OptionalInt nice = ThreadNice.ofCurrentThread();
            assertTrue(nice.isPresent());
            assertTrue(nice.getAsInt() >= -20 && nice.getAsInt() <= 19, String.valueOf(nice));
        } else {
            assertEquals(OptionalInt.empty(), ThreadNice.ofCurrentThread());
        }
    }
}
