package dev.agentx.clarify.cli;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.dashboard.Dashboard;
import dev.agentx.clarify.dashboard.DashboardServer;
import dev.agentx.clarify.files.IoErrors;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.function.Supplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code agentx dashboard}: the project's clarifications in a browser, live (docs/dashboard.md). */
@Command(name = "dashboard", mixinStandardHelpOptions = true,
        description = {"Serve a read-only web page of this project's clarifications on 127.0.0.1: agents and what "
                + "each waits on, the wait-for graph with deadlocks, open threads, escalations and the digest.",
                "The page follows changes as they happen. Ctrl-C stops it."},
        footer = {"", "Examples:", "  agentx dashboard", "  agentx dashboard --port 8080 --open"})
final class DashboardCommand implements Runnable {
    static final int DEFAULT_PORT = 7878;

    private final CliContext ctx;

    @Option(names = "--port", paramLabel = "N", description = "The port on 127.0.0.1 (default " + DEFAULT_PORT
            + "; 0: any free port).")
    int port = DEFAULT_PORT;

    @Option(names = "--open", description = "Open the page in the default browser.")
    boolean open;

    DashboardCommand(CliContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void run() {
        if (port < 0 || port > 65535) {
            throw new ClarifyException(ErrorCode.USAGE, "--port must be from 0 to 65535, got " + port + ".");
        }
        ctx.noteIfNoProject();
        LocalMode local = ctx.local();
        Path state = local.root().resolve(".agentx").resolve("state");
        portFree();
        DashboardServer server;
        try {
            server = new DashboardServer(snapshots(local), local.files().ledgers().directory(),
                    List.of(state.resolve("agent-status.json"), state.resolve("events.jsonl"))).start("127.0.0.1", port);
        } catch (RuntimeException e) {
            throw cannotServe(e);
        }
        String url = "http://127.0.0.1:" + server.port() + "/";
        if (ctx.json()) {
            com.fasterxml.jackson.databind.node.ObjectNode o = ctx.mapper().createObjectNode();
            o.put("root", local.root().toString());
            o.put("url", url);
            ctx.printJson(o);
        } else {
            ctx.out.println("Dashboard of " + local.root() + " at " + url + " (Ctrl-C to stop)");
            ctx.out.flush();
        }
        if (open) {
            openBrowser(url);
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }, "agentx-dashboard-stop"));
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A new snapshot of the project per request. */
    static Supplier<Dashboard.Snapshot> snapshots(LocalMode local) {
        String title = local.root().getFileName() == null ? local.root().toString()
                : local.root().getFileName().toString();
        return Dashboard.of(title, local.clock(), local.ledgers(), local.activeLedgers(), local.statuses(),
                local.eventLog(), local::upstreamOrder);
    }

    /**
     * A port in use is refused here, before the web server starts, so that the user reads only the
     * error below and not also the web server's own log of its failed start. (The server's start
     * refuses it too, should another program take the port in between.)
     */
    private void portFree() {
        if (port == 0) {
            return;
        }
        try (java.net.ServerSocket probe = new java.net.ServerSocket()) {
            probe.setReuseAddress(true); // as the web server binds: a port in TIME_WAIT is free to it
            probe.bind(new java.net.InetSocketAddress("127.0.0.1", port));
        } catch (java.io.IOException e) {
            throw cannotServe(e);
        }
    }

    private ClarifyException cannotServe(Exception e) {
        return new ClarifyException(ErrorCode.USAGE, "Cannot serve the dashboard on 127.0.0.1:" + port + ": "
                + IoErrors.innermost(e) + ". Choose another port with --port.", e);
    }

    private void openBrowser(String url) {
        try {
            if (java.awt.Desktop.isDesktopSupported()
                    && java.awt.Desktop.getDesktop().isSupported(java.awt.Desktop.Action.BROWSE)) {
                java.awt.Desktop.getDesktop().browse(java.net.URI.create(url));
                return;
            }
            String os = System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT);
            String[] cmd = os.contains("mac") ? new String[] {"open", url}
                    : os.contains("win") ? new String[] {"rundll32", "url.dll,FileProtocolHandler", url}
                    : new String[] {"xdg-open", url};
            Process opener = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            // the opener fails when no browser is set up (xdg-open on a server): said once it ends,
            // off this thread, as an opener may also run as long as the browser it started
            opener.onExit().thenAccept(p -> {
                if (p.exitValue() != 0) {
                    cannotOpen(url, cmd[0] + " exited with " + p.exitValue());
                }
            });
        } catch (Exception e) {
            cannotOpen(url, e.getMessage());
        }
    }

    private void cannotOpen(String url, String why) {
        synchronized (ctx.err) {
            ctx.err.println("note: could not open a browser (" + why + "); open " + url + " yourself.");
            ctx.err.flush();
        }
    }

}
