package dev.agentx.clarify.http;

import io.javalin.http.Context;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The Host headers a page served on a loopback port answers: its own addresses only. A web page
 * the browser loaded from elsewhere can point a name of its own at 127.0.0.1 (DNS rebinding) and
 * then read what the local page shows; its requests carry that name as their Host, so they are
 * refused. The dashboard and the setup page (whose page carries the anti-forgery state of the
 * App's registration) both answer through it.
 */
public final class LoopbackHosts {
    private final Set<String> hosts;
    private final int port;

    /** The addresses of a server bound to {@code host} on {@code port}. */
    public LoopbackHosts(String host, int port) {
        this.port = port;
        this.hosts = Set.copyOf(List.of("127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port, host + ":" + port));
    }

    /**
     * Whether the request is addressed to this server; if not, it is answered {@code 403} naming
     * {@code what} and its address, and nothing else handles it.
     */
    public boolean admit(Context ctx, String what) {
        if (hosts.contains(Objects.requireNonNullElse(ctx.header("Host"), ""))) {
            return true;
        }
        ctx.status(403).contentType("text/plain; charset=utf-8")
                .result("This " + what + " answers only at http://127.0.0.1:" + port + "/\n");
        ctx.skipRemainingHandlers();
        return false;
    }
}
