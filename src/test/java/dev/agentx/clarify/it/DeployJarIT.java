package dev.agentx.clarify.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** After 'mvn package': the jar deploy/Dockerfile copies out of its build stage is what the build makes. */
class DeployJarIT {
    @Test
    void theJarTheDockerfileCopiesExists() throws Exception {
        String docker = Files.readString(Path.of("deploy", "Dockerfile"));
        Matcher workdir = Pattern.compile("(?m)^WORKDIR (\\S+)$").matcher(docker);
        Matcher copy = Pattern.compile("(?m)^COPY --from=build (\\S+) ").matcher(docker);
        assertTrue(workdir.find() && copy.find(), docker);
        String jar = copy.group(1);
        assertTrue(jar.startsWith(workdir.group(1) + "/"), jar + " is under the build stage's WORKDIR");
        Path built = Path.of(jar.substring(workdir.group(1).length() + 1));
        assertTrue(Files.isRegularFile(built) && Files.size(built) > 1_000_000, built + " exists after the build");
    }
}
