package dev.agentx.clarify.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;

/**
 * An {@code agentx} launcher over the test classpath, put first on an agent's PATH, so that
 * example agents can call the CLI as users' agents do (before the jar is packaged).
 */
public final class AgentxOnPath {
    private AgentxOnPath() {
    }

    /** Writes {@code binDir/agentx} and adds {@code binDir} to the front of {@code env}'s PATH. */
    public static void install(Path binDir, Map<String, String> env) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String script = "#!/usr/bin/env bash\nexec '" + java + "' -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto"
                + " -cp '" + System.getProperty("java.class.path") + "' dev.agentx.clarify.cli.Main \"$@\"\n";
        try {
            Files.createDirectories(binDir);
            Path p = binDir.resolve("agentx");
            Files.writeString(p, script, StandardCharsets.UTF_8);
            Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        env.put("PATH", binDir + ":" + env.getOrDefault("PATH", "/usr/bin:/bin"));
        env.put("NO_COLOR", "1");
    }
}
