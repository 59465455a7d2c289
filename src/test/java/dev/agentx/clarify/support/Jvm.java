package dev.agentx.clarify.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Starts a separate JVM running a main class of the test classpath: real processes for locking tests. */
public final class Jvm {
    private Jvm() {
    }

    public static ProcessBuilder builder(Class<?> main, String... args) {
        return builder(List.of(), main, args);
    }

    /** As {@link #builder(Class, String...)}, with JVM options (e.g. {@code -Dname=value}) before the main class. */
    public static ProcessBuilder builder(List<String> jvmOptions, Class<?> main, String... args) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx128m"));
        cmd.addAll(jvmOptions);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        cmd.addAll(List.of(args));
        return new ProcessBuilder(cmd);
    }

    public static Process start(Class<?> main, String... args) {
        try {
            return builder(main, args).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
