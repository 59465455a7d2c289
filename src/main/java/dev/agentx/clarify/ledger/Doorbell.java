package dev.agentx.clarify.ledger;

import dev.agentx.clarify.files.IoErrors;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.Collection;

/**
 * How a waiter for an issue's lock learns that something changed without polling: a UDP socket
 * on the loopback interface, whose port it writes in its request (see ChangeQueue). A holder
 * that let go rings the bells of the waiters it replied to and of the one that has waited longest
 * (which takes the lock and carries out the changes of all those still waiting); a ring is
 * only a hint (the waiter looks for itself), and a waiter that hears none looks again after a
 * while anyway, for the holders that ring no bell: a process that died, or one that knows only
 * the lock-file protocol. Many processes on few cores so wait in the kernel, not in a loop.
 */
final class Doorbell implements AutoCloseable {
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    private final DatagramSocket socket;
    private final DatagramPacket packet = new DatagramPacket(new byte[16], 16);

    Doorbell() {
        try {
            socket = new DatagramSocket(new InetSocketAddress(LOOPBACK, 0));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open a loopback socket to wait on: " + e.getMessage(), e);
        }
    }

    int port() {
        return socket.getLocalPort();
    }

    /** Waits until the bell rings (true) or {@code most} passes (false). */
    boolean await(Duration most) {
        try {
            socket.setSoTimeout((int) Math.max(1, most.toMillis()));
            socket.receive(packet);
            return true;
        } catch (SocketTimeoutException e) {
            return false; // time to look anyway
        } catch (IOException e) {
            throw new UncheckedIOException("cannot wait on " + socket.getLocalSocketAddress() + ": " + IoErrors.why(e), e);
        }
    }

    /** Rings the bells on {@code ports} of this host. Best effort: a bell that is gone is nobody's loss. */
    static void ring(Collection<Integer> ports) {
        if (ports.isEmpty()) {
            return;
        }
        try (DatagramSocket out = new DatagramSocket()) {
            byte[] one = {1};
            for (int port : ports) {
                try {
                    out.send(new DatagramPacket(one, 1, LOOPBACK, port));
                } catch (IOException e) {
                    // the waiter left: nothing to tell
                }
            }
        } catch (IOException e) {
            // no socket: the waiters look again when their wait runs out
        }
    }

    @Override
    public void close() {
        socket.close();
    }
}
