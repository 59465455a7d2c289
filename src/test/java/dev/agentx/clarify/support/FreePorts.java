package dev.agentx.clarify.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;

/** Ports for the servers and processes the tests start. */
public final class FreePorts {
    private FreePorts() {
    }

    /** A port nothing listens on now: the system's pick for a socket opened and closed at once. */
    public static int next() {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot find a free port: " + e.getMessage(), e);
        }
    }
}
