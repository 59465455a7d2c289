package dev.agentx.clarify.cli.daemon;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The daemon's wire format: frames of a type byte, a length (4 bytes, big-endian) and that many
 * bytes. The client opens with {@link #KEY} and {@link #HELLO}; the daemon answers {@link #READY}
 * (the command runs) or {@link #REFUSED} (it does not: the client runs it itself), then sends
 * {@link #OUT}, {@link #ERR} and {@link #READ} frames and last {@link #EXIT}. The client answers a
 * READ with one {@link #IN} frame (empty at the end of its standard input). JDK classes only: the
 * client's process loads nothing else.
 */
final class Frames {
    static final byte KEY = 1;
    static final byte HELLO = 2;
    static final byte READY = 3;
    static final byte REFUSED = 4;
    static final byte OUT = 5;
    static final byte ERR = 6;
    static final byte READ = 7;
    static final byte IN = 8;
    static final byte EXIT = 9;

    /** Longer frames are refused: a peer that sends one is not ours. */
    static final int MAX = 4 << 20;
    /** The key's length in bytes. */
    static final int KEY_BYTES = 32;

    private Frames() {
    }

    /** A frame as read. */
    record Frame(byte type, byte[] data) {
        int number() {
            if (data.length != 4) {
                throw new IllegalStateException("a frame of type " + type + " carries 4 bytes, not " + data.length);
            }
            return ByteBuffer.wrap(data).getInt();
        }
    }

    /** Writes one frame and flushes; callers that share {@code out} between threads hold its lock. */
    static void write(DataOutputStream out, byte type, byte[] data, int off, int len) throws IOException {
        out.writeByte(type);
        out.writeInt(len);
        out.write(data, off, len);
        out.flush();
    }

    static void write(DataOutputStream out, byte type, byte[] data) throws IOException {
        write(out, type, data, 0, data.length);
    }

    static void writeNumber(DataOutputStream out, byte type, int n) throws IOException {
        write(out, type, ByteBuffer.allocate(4).putInt(n).array());
    }

    /** The next frame, or null at the end of the stream before a frame starts. */
    static Frame read(DataInputStream in) throws IOException {
        int type = in.read();
        if (type < 0) {
            return null;
        }
        int len = in.readInt();
        if (len < 0 || len > MAX) {
            throw new IOException("a frame of " + len + " bytes");
        }
        byte[] data = new byte[len];
        in.readFully(data);
        return new Frame((byte) type, data);
    }

    /** What a client asks: the command line, where and with what it runs. */
    record Hello(String identity, String cwd, boolean terminal, List<String> args, Map<String, String> env) {
        byte[] encode() throws IOException {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream(4096);
            DataOutputStream out = new DataOutputStream(bytes);
            string(out, identity);
            string(out, cwd);
            out.writeBoolean(terminal);
            out.writeInt(args.size());
            for (String a : args) {
                string(out, a);
            }
            out.writeInt(env.size());
            for (Map.Entry<String, String> e : env.entrySet()) {
                string(out, e.getKey());
                string(out, e.getValue());
            }
            out.flush();
            return bytes.toByteArray();
        }

        static Hello decode(byte[] data) throws IOException {
            DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(data));
            String identity = string(in);
            String cwd = string(in);
            boolean terminal = in.readBoolean();
            int n = count(in);
            List<String> args = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                args.add(string(in));
            }
            int m = count(in);
            Map<String, String> env = new LinkedHashMap<>();
            for (int i = 0; i < m; i++) {
                env.put(string(in), string(in));
            }
            if (in.read() >= 0) {
                throw new IOException("bytes after the hello");
            }
            return new Hello(identity, cwd, terminal, List.copyOf(args), Map.copyOf(env));
        }

        private static void string(DataOutputStream out, String s) throws IOException {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            out.writeInt(b.length);
            out.write(b);
        }

        private static String string(DataInputStream in) throws IOException {
            int len = count(in);
            byte[] b = new byte[len];
            in.readFully(b);
            return new String(b, StandardCharsets.UTF_8);
        }

        private static int count(DataInputStream in) throws IOException {
            int n = in.readInt();
            if (n < 0 || n > MAX) {
                throw new EOFException("a count of " + n);
            }
            return n;
        }
    }

    /**
     * Reads a socket channel without the lock that {@code Channels.newInputStream} holds over a
     * blocking read, which would keep every write of the other direction waiting.
     */
    static InputStream input(SocketChannel ch) {
        return new InputStream() {
            @Override
            public int read() throws IOException {
                byte[] one = new byte[1];
                int n = read(one, 0, 1);
                return n < 0 ? -1 : one[0] & 0xff;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                if (len == 0) {
                    return 0;
                }
                int n;
                do {
                    n = ch.read(ByteBuffer.wrap(b, off, len));
                } while (n == 0);
                return n;
            }
        };
    }

    /** Writes a socket channel (see {@link #input}). */
    static OutputStream output(SocketChannel ch) {
        return new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                ByteBuffer buf = ByteBuffer.wrap(b, off, len);
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
            }
        };
    }
}
