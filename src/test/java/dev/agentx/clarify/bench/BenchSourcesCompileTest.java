package dev.agentx.clarify.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Java programs in {@code bench/} run with the source launcher ({@code java -cp
 * target/agentx.jar bench/X.java}), outside the Maven build, so nothing else notices when a change
 * of the code breaks them: they are compiled here against the code as it is.
 */
class BenchSourcesCompileTest {
    @Test
    void theBenchProgramsOutsideTheBuildCompileAgainstTheCode(@TempDir Path out) throws IOException {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "the tests run on a JDK");
        List<String> args = new ArrayList<>(List.of("-d", out.toString(), "-proc:none", "-cp",
                System.getProperty("java.class.path")));
        try (Stream<Path> files = Files.list(Path.of("bench"))) {
            files.filter(p -> p.toString().endsWith(".java")).sorted().forEach(p -> args.add(p.toString()));
        }
        assertTrue(args.stream().anyMatch(a -> a.endsWith(".java")), "bench/ has Java programs");
        ByteArrayOutputStream errors = new ByteArrayOutputStream();
        int rc = javac.run(null, errors, errors, args.toArray(String[]::new));
        assertEquals(0, rc, errors.toString(StandardCharsets.UTF_8));
    }
}
