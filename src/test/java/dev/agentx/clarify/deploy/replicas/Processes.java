package dev.agentx.clarify.deploy.replicas;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** The programs the replicas check runs ({@code docker compose}, {@code kubectl}): run to the end, output kept. */
final class Processes {
    private Processes() {
    }

    /** A program's exit code and its output, stdout and stderr together. */
    record Run(int rc, String out) {
    }

    /** Runs {@code cmd} to its end; 127 when it cannot be started (not installed), 130 when interrupted. */
    static Run exec(List<String> cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            return new Run(p.waitFor(), out);
        } catch (IOException e) {
            return new Run(127, "cannot run " + cmd.get(0) + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Run(130, "interrupted");
        }
    }

    /** {@code run}, or an IllegalStateException saying {@code what} failed, with its output. */
    static Run requireOk(Run run, String what) {
        if (run.rc() != 0) {
            throw new IllegalStateException(what + " failed (exit " + run.rc() + "):\n" + run.out());
        }
        return run;
    }
}
