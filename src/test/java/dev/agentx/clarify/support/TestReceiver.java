package dev.agentx.clarify.support;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * A real HTTP receiver of notifications on 127.0.0.1 (the JDK's server): records every request it
 * gets (headers, body) and answers as {@link #answer} says: a status, or one that never comes until
 * {@link #release()} (a receiver that hangs). {@link #stop()} and {@link #start()} take it down and
 * bring it back on the same port (a receiver that is down refuses connections).
 */
public final class TestReceiver implements AutoCloseable {
    /** One request as received. */
    public record Request(String path, Map<String, String> headers, byte[] body) {
        public String header(String name) {
            return headers.get(name);
        }

        public String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    /** An answer: {@code status}, and {@code retryAfter} (or null); {@code hang}: none until released. */
    public record Answer(int status, String retryAfter, boolean hang) {
        public static Answer ok() {
            return new Answer(204, null, false);
        }

        public static Answer status(int status) {
            return new Answer(status, null, false);
        }
    }

    public final List<Request> requests = new CopyOnWriteArrayList<>();
    private final int port;
    private volatile HttpServer server;
    private volatile CountDownLatch hung = new CountDownLatch(1);
    private final AtomicInteger inFlight = new AtomicInteger();
    /** What to answer to the n-th request (from 0). */
    public volatile Function<Integer, Answer> answer = n -> Answer.ok();

    private TestReceiver(int port) {
        this.port = port;
    }

    /** A receiver listening on a free port of 127.0.0.1. */
    public static TestReceiver started() {
        TestReceiver r = new TestReceiver(freePort());
        r.start();
        return r;
    }

    /** A receiver on a free port that is not listening yet (down: connections are refused until {@link #start()}). */
    public static TestReceiver down() {
        return new TestReceiver(freePort());
    }

    private static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    public synchronized void start() {
        if (server != null) {
            return;
        }
        try {
            HttpServer s = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 50);
            s.setExecutor(Executors.newCachedThreadPool(r -> {
                Thread t = new Thread(r, "test-receiver");
                t.setDaemon(true);
                return t;
            }));
            s.createContext("/", this::handle);
            s.start();
            server = s;
        } catch (IOException e) {
            throw new IllegalStateException("cannot listen on port " + port + ": " + e, e);
        }
    }

    public synchronized void stop() {
        if (server != null) {
            release();
            server.stop(0);
            server = null;
        }
    }

    /** Lets every request held by a hanging answer go (answered 200). */
    public void release() {
        hung.countDown();
    }

    public int port() {
        return port;
    }

    /** {@code http://127.0.0.1:PORT/hook}. */
    public String url() {
        return "http://127.0.0.1:" + port + "/hook";
    }

    /** Requests being answered now (a hanging one among them). */
    public int inFlight() {
        return inFlight.get();
    }

    /** The requests' {@code X-AgentX-Delivery} headers, in order. */
    public List<String> deliveries() {
        List<String> out = new ArrayList<>();
        requests.forEach(r -> out.add(r.header("X-AgentX-Delivery")));
        return out;
    }

    private void handle(HttpExchange ex) throws IOException {
        inFlight.incrementAndGet();
        try {
            Map<String, String> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
            ex.getRequestHeaders().forEach((k, v) -> headers.put(k, String.join(",", v)));
            byte[] body = ex.getRequestBody().readAllBytes();
            int n = requests.size();
            requests.add(new Request(ex.getRequestURI().toString(), headers, body));
            Answer a = answer.apply(n);
            if (a.hang()) {
                try {
                    hung.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                a = new Answer(200, null, false);
            }
            if (a.retryAfter() != null) {
                ex.getResponseHeaders().add("Retry-After", a.retryAfter());
            }
            byte[] out = ("answer " + a.status()).getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(a.status(), a.status() == 204 ? -1 : out.length);
            if (a.status() != 204) {
                try (OutputStream o = ex.getResponseBody()) {
                    o.write(out);
                }
            }
        } finally {
            ex.close();
            inFlight.decrementAndGet();
        }
    }

    @Override
    public void close() {
        stop();
    }
}
