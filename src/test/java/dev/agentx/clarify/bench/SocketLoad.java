package dev.agentx.clarify.bench;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The webhook benchmark's load generator: HTTP/1.1 POSTs over plain sockets kept alive, one
 * connection per sending thread and server, each request's bytes written with one call and its
 * response read to its end. GitHub's deliveries come from outside the server's machine; sent
 * from the same two cores, they should take as little of them as they can. The JDK's
 * {@code java.net.http} client took about 0.8 ms of CPU per delivery in this benchmark (its
 * selector thread, its executor and their hand-offs); this takes a few tens of microseconds.
 */
final class SocketLoad {
    /** A response's status and its {@code Server-Timing} header ("" when it has none). */
    record Response(int status, String serverTiming) {
    }

    /** A kept-alive connection to one server. */
    private static final class Connection {
        final Socket socket;
        final OutputStream out;
        final InputStream in;

        Connection(URI uri) throws IOException {
            socket = new Socket();
            socket.setTcpNoDelay(true);
            socket.connect(new InetSocketAddress(uri.getHost(), uri.getPort()), 5_000);
            socket.setSoTimeout(30_000);
            out = socket.getOutputStream();
            in = new BufferedInputStream(socket.getInputStream(), 8192);
        }

        void close() {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing a connection that failed
            }
        }
    }

    /** Each sending thread's connections, by server. */
    private final ThreadLocal<Map<URI, Connection>> connections = ThreadLocal.withInitial(HashMap::new);

    /** The request's bytes: request line, headers and body. */
    static byte[] request(URI uri, Map<String, String> headers, byte[] body) {
        StringBuilder head = new StringBuilder(256).append("POST ").append(uri.getRawPath()).append(" HTTP/1.1\r\n")
                .append("Host: ").append(uri.getHost()).append(':').append(uri.getPort()).append("\r\n");
        headers.forEach((name, value) -> head.append(name).append(": ").append(value).append("\r\n"));
        head.append("Content-Length: ").append(body.length).append("\r\n\r\n");
        byte[] h = head.toString().getBytes(StandardCharsets.US_ASCII);
        byte[] all = new byte[h.length + body.length];
        System.arraycopy(h, 0, all, 0, h.length);
        System.arraycopy(body, 0, all, h.length, body.length);
        return all;
    }

    /**
     * Sends {@code request} (from {@link #request}) to {@code uri}'s server on the calling thread's
     * connection and reads the response. A connection the server closed while it was idle is
     * opened again and the request sent once more (a webhook delivery is idempotent by its id).
     */
    Response send(URI uri, byte[] request) throws IOException {
        Map<URI, Connection> mine = connections.get();
        boolean reused = mine.containsKey(uri);
        while (true) {
            Connection c = mine.get(uri);
            if (c == null) {
                c = new Connection(uri);
                mine.put(uri, c);
            }
            try {
                return exchange(c, request, mine, uri);
            } catch (IOException e) {
                c.close();
                mine.remove(uri);
                if (!reused) {
                    throw e;
                }
                reused = false; // once more, on a new connection
            }
        }
    }

    private static Response exchange(Connection c, byte[] request, Map<URI, Connection> mine, URI uri)
            throws IOException {
        c.out.write(request);
        c.out.flush();
        String status = line(c.in);
        if (status == null) {
            throw new IOException("the server closed the connection");
        }
        int code = Integer.parseInt(status.substring(9, 12));
        long length = -1;
        boolean chunked = false;
        boolean close = false;
        String timing = "";
        String header;
        while ((header = line(c.in)) != null && !header.isEmpty()) {
            int colon = header.indexOf(':');
            if (colon < 0) {
                continue;
            }
            String name = header.substring(0, colon).trim().toLowerCase(Locale.ROOT);
            String value = header.substring(colon + 1).trim();
            switch (name) {
                case "content-length" -> length = Long.parseLong(value);
                case "transfer-encoding" -> chunked = value.toLowerCase(Locale.ROOT).contains("chunked");
                case "connection" -> close = value.equalsIgnoreCase("close");
                case "server-timing" -> timing = value;
                default -> { }
            }
        }
        if (chunked) {
            long size;
            while ((size = Long.parseLong(line(c.in).split(";", 2)[0].trim(), 16)) > 0) {
                skip(c.in, size + 2); // the chunk and its CRLF
            }
            while ((header = line(c.in)) != null && !header.isEmpty()) {
                // trailers
            }
        } else if (length > 0) {
            skip(c.in, length);
        } else if (length < 0) {
            close = true; // a body up to the end of the connection
            while (c.in.read() >= 0) {
                // discard
            }
        }
        if (close) {
            c.close();
            mine.remove(uri);
        }
        return new Response(code, timing);
    }

    /** A line without its CRLF; null at the end of the stream before any byte. */
    private static String line(InputStream in) throws IOException {
        StringBuilder s = new StringBuilder(64);
        int b;
        while ((b = in.read()) >= 0) {
            if (b == '\n') {
                int n = s.length();
                return n > 0 && s.charAt(n - 1) == '\r' ? s.substring(0, n - 1) : s.toString();
            }
            s.append((char) b);
        }
        if (s.length() == 0) {
            return null;
        }
        throw new IOException("the connection ended in the middle of a line");
    }

    private static void skip(InputStream in, long n) throws IOException {
        while (n > 0) {
            long skipped = in.skip(n);
            if (skipped <= 0) {
                if (in.read() < 0) {
                    throw new IOException("the connection ended in the middle of a body");
                }
                skipped = 1;
            }
            n -= skipped;
        }
    }

    /** Closes the calling thread's connections. */
    void closeMine() {
        connections.get().values().forEach(Connection::close);
        connections.get().clear();
    }
}
