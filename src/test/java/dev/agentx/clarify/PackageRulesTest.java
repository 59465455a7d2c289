package dev.agentx.clarify;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The package rules of docs/architecture.md, read from the sources' imports: the engine imports no
 * web, GitHub, CLI, template or database library and no adapter; nothing but the CLI imports the
 * CLI or picocli (Local Mode's composition root is {@code app}, which the CLI and the server both
 * use); only the GitHub adapter talks to hub4j.
 */
class PackageRulesTest {
    private static final Path SRC = Path.of("src/main/java/dev/agentx/clarify");
    private static final List<String> ENGINE = List.of("protocol", "routing", "monitor", "render", "workflow", "gate");
    private static final List<String> NOT_IN_ENGINE = List.of("import io.javalin", "import org.kohsuke",
            "import picocli", "import java.sql", "import javax.sql", "import gg.jte", "import io.modelcontextprotocol",
            "import dev.agentx.clarify.cli", "import dev.agentx.clarify.github", "import dev.agentx.clarify.mcp",
            "import dev.agentx.clarify.dashboard", "import dev.agentx.clarify.app");

    private static List<String> violations(String pkg, List<String> forbidden) throws IOException {
        List<String> out = new ArrayList<>();
        try (Stream<Path> files = Files.walk(SRC.resolve(pkg))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                for (String line : Files.readAllLines(f)) {
                    for (String bad : forbidden) {
                        if (line.startsWith(bad + ".") || line.startsWith(bad + ";")) {
                            out.add(SRC.relativize(f) + ": " + line);
                        }
                    }
                }
            }
        }
        return out;
    }

    @Test
    void theEngineImportsNoAdapterAndNoLibraryOfOne() throws IOException {
        List<String> found = new ArrayList<>();
        for (String pkg : ENGINE) {
            found.addAll(violations(pkg, NOT_IN_ENGINE));
        }
        assertEquals(List.of(), found);
    }

    @Test
    void onlyTheCliImportsTheCliAndPicocli() throws IOException {
        List<String> found = new ArrayList<>();
        try (Stream<Path> dirs = Files.list(SRC)) {
            for (Path d : dirs.filter(Files::isDirectory).toList()) {
                if (!d.getFileName().toString().equals("cli")) {
                    found.addAll(violations(d.getFileName().toString(),
                            List.of("import dev.agentx.clarify.cli", "import picocli")));
                }
            }
        }
        assertEquals(List.of(), found);
    }

    @Test
    void onlyThePostgresStoreTalksToTheDatabase() throws IOException {
        List<String> found = new ArrayList<>();
        try (Stream<Path> files = Files.walk(SRC)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                if (f.startsWith(SRC.resolve("store/postgres"))) {
                    continue;
                }
                for (String line : Files.readAllLines(f)) {
                    for (String bad : List.of("import java.sql", "import javax.sql", "import com.zaxxer",
                            "import org.flywaydb", "import org.postgresql")) {
                        if (line.startsWith(bad + ".")) {
                            found.add(SRC.relativize(f) + ": " + line);
                        }
                    }
                }
            }
        }
        assertEquals(List.of(), found);
    }

    @Test
    void onlyTheGitHubAdapterTalksToHub4j() throws IOException {
        List<String> found = new ArrayList<>();
        try (Stream<Path> dirs = Files.list(SRC)) {
            for (Path d : dirs.filter(Files::isDirectory).toList()) {
                if (!d.getFileName().toString().equals("github")) {
                    found.addAll(violations(d.getFileName().toString(), List.of("import org.kohsuke")));
                }
            }
        }
        assertEquals(List.of(), found);
    }
}
