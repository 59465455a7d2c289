package dev.agentx.clarify.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.javalin.Javalin;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.Test;

/** What every server of ours starts with, as the started Jetty has it. */
class HttpServerDefaultsTest {
    @Test
    void theListeningSocketQueuesTheConnectionsOfABurstNotTheJdkDefaultFifty() {
        Javalin app = Javalin.create(cfg -> {
            HttpServerDefaults.apply(cfg);
            cfg.jetty.host = "127.0.0.1";
            cfg.jetty.port = 0;
        }).start();
        try {
            Connector[] connectors = app.jettyServer().server().getConnectors();
            assertEquals(1, connectors.length);
            ServerConnector c = (ServerConnector) connectors[0];
            assertEquals(HttpServerDefaults.ACCEPT_QUEUE, c.getAcceptQueueSize());
            assertEquals(app.port(), c.getLocalPort());
        } finally {
            app.stop();
        }
    }
}
