package dev.agentx.clarify.cli.daemon;

import dev.agentx.clarify.cli.Main;
import dev.agentx.clarify.files.JsonSupport;
import dev.agentx.clarify.files.RuntimeFolder;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.FileChannel;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The daemon (docs/daemon.md): one process per build and user that runs the CLI's {@code clarify}
 * and {@code mcp} commands for {@link DaemonClient}s, each on a thread of its own, through the same
 * {@link Main#run} as a process of its own, with the client's arguments, working folder,
 * environment and streams. A client proves itself with the key in a file only its user can read
 * before anything it sends is parsed. The daemon ends after {@code AGENTX_DAEMON_IDLE_SECONDS}
 * without commands (default 600), when its build changes on disk, when its socket or key is taken
 * away, or on {@code agentx daemon stop}; it then takes no new command and lets running ones end.
 */
public final class DaemonServer {
    private static final long DEFAULT_IDLE_SECONDS = 600;
    private static final long MAX_LOG_BYTES = 1 << 20;
    /** How long a connection may take to give the key. */
    private static final Duration HANDSHAKE = Duration.ofSeconds(5);

    private final DaemonPlace place;
    private final byte[] key;
    private final ServerSocketChannel server;
    /** Locked while this daemon takes commands: a second one of the build exits at once. */
    private final FileChannel lockFile;
    /** Closes connections that have not given the key within {@link #HANDSHAKE}. */
    private final ScheduledExecutorService handshakes = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "agentx-daemon-handshakes");
        t.setDaemon(true);
        return t;
    });
    private final Duration idle;
    private final PrintStream log;
    private final Instant started = Instant.now();
    private final AtomicInteger active = new AtomicInteger();
    private final AtomicLong served = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    private volatile long lastEnd = System.nanoTime();
    /** Held (shared) by each running command; taken alone to leave the projects' runtime folders between commands. */
    private final ReentrantReadWriteLock use = new ReentrantReadWriteLock();
    private volatile String stopping;

    private DaemonServer(DaemonPlace place, byte[] key, ServerSocketChannel server, FileChannel lockFile, Duration idle,
                         PrintStream log) {
        this.place = place;
        this.key = key;
        this.server = server;
        this.lockFile = lockFile;
        this.idle = idle;
        this.log = log;
    }

    /** {@code DaemonServer DIR NAME}, as {@link DaemonClient#start} runs it. */
    public static void main(String[] args) throws Exception {
        PrintStream log = System.err;
        if (args.length != 2) {
            log.println("usage: DaemonServer DIR NAME (started by agentx itself)");
            System.exit(2);
        }
        DaemonPlace place = DaemonPlace.of(Map.of(DaemonPlace.DIR_ENV, args[0]));
        int code;
        try {
            code = start(place, args[1], System.getenv(), log);
        } finally {
            Files.deleteIfExists(place.starting());
        }
        if (code != 0) {
            System.exit(code);
        }
    }

    /** Starts serving, or returns the exit code of a daemon that does not start. */
    private static int start(DaemonPlace place, String name, Map<String, String> env, PrintStream log) throws Exception {
        if (!place.name.equals(name)) {
            note(log, "not started: this process's build is not the one of " + name);
            return 2;
        }
        if (!place.private_()) {
            note(log, "not started: " + place.dir + " must be a folder of this user that no one else may use");
            return 1;
        }
        FileChannel lockFile = FileChannel.open(place.lock(), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        if (lockFile.tryLock() == null) {
            lockFile.close();
            return 0; // another daemon of this build runs
        }
        if (Files.exists(place.log()) && Files.size(place.log()) > MAX_LOG_BYTES) {
            Files.write(place.log(), new byte[0], StandardOpenOption.TRUNCATE_EXISTING);
        }
        for (String other : place.sweepOtherBuilds(java.time.Instant.now().minus(DaemonPlace.OTHER_BUILDS_KEPT))) {
            note(log, "removed the files of the daemon of another build, unused for a day: " + other);
        }
        byte[] key = new byte[Frames.KEY_BYTES];
        new SecureRandom().nextBytes(key);
        Path tmp = place.dir.resolve(place.name + ".key.tmp");
        Files.deleteIfExists(tmp);
        Files.write(tmp, key, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-------"));
        Files.deleteIfExists(place.socket()); // a daemon that died left it
        ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(place.socket()));
        Files.setPosixFilePermissions(place.socket(), PosixFilePermissions.fromString("rw-------"));
        Files.move(tmp, place.key(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        long seconds = DEFAULT_IDLE_SECONDS;
        try {
            seconds = Long.parseLong(env.getOrDefault(DaemonClient.IDLE_ENV, "" + DEFAULT_IDLE_SECONDS).strip());
        } catch (NumberFormatException e) {
            note(log, DaemonClient.IDLE_ENV + " is no number of seconds: " + DEFAULT_IDLE_SECONDS + " s");
        }
        DaemonServer daemon = new DaemonServer(place, key, server, lockFile,
                Duration.ofSeconds(Math.max(1, seconds)), log);
        Routing.install(log);
        note(log, "started: pid " + ProcessHandle.current().pid() + ", socket " + place.socket() + ", idle "
                + daemon.idle.toSeconds() + " s");
        Files.deleteIfExists(place.starting());
        daemon.watch();
        Thread warm = new Thread(daemon::warm, "agentx-daemon-warm");
        warm.setDaemon(true);
        warm.setPriority(Thread.MIN_PRIORITY);
        warm.start();
        daemon.accept();
        return 0;
    }

    /** {@link Main#warm}, as a command: the runtime folders are not left under it. */
    private void warm() {
        use.readLock().lock();
        try {
            Main.warm(place.dir.resolve(place.name + ".warm"));
        } finally {
            use.readLock().unlock();
        }
    }

    private static void note(PrintStream log, String message) {
        log.println(Instant.now() + " agentx daemon: " + message);
        log.flush();
    }

    private void accept() {
        int n = 0;
        while (stopping == null) {
            SocketChannel ch;
            try {
                ch = server.accept();
            } catch (IOException e) {
                if (stopping == null) {
                    stop("the socket failed: " + e);
                }
                break;
            }
            AtomicBoolean authenticated = new AtomicBoolean();
            handshakes.schedule(() -> {
                if (!authenticated.get()) {
                    closeQuietly(ch);
                }
            }, HANDSHAKE.toMillis(), TimeUnit.MILLISECONDS);
            Thread t = new Thread(() -> connection(ch, authenticated), "agentx-daemon-" + (++n));
            t.setDaemon(true);
            t.start();
        }
        // the commands under way end; then the process
        while (active.get() > 0) {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                break;
            }
        }
        note(log, "stopped: " + stopping + " (" + served.get() + " commands served)");
        System.exit(0);
    }

    /** Stops taking commands: the socket and key go first, so the next client starts a new daemon. */
    private synchronized void stop(String why) {
        if (stopping != null) {
            return;
        }
        stopping = why;
        try {
            byte[] there = Files.readAllBytes(place.key());
            if (MessageDigest.isEqual(there, key)) {
                Files.deleteIfExists(place.socket());
                Files.deleteIfExists(place.key());
            }
        } catch (IOException e) {
            // gone already
        }
        try {
            server.close(); // wakes accept()
        } catch (IOException e) {
            // closed
        }
        // a new daemon may start while the commands under way (an agent's MCP session) end here
        closeQuietly(lockFile);
    }

    private static void closeQuietly(java.nio.channels.Channel ch) {
        try {
            ch.close();
        } catch (IOException e) {
            // closed already
        }
    }

    /** Every few seconds: idle too long, build changed, socket or key taken away? */
    private void watch() {
        Thread t = new Thread(() -> {
            long every = Math.max(200, Math.min(5_000, idle.toMillis() / 4));
            while (stopping == null) {
                try {
                    Thread.sleep(every);
                } catch (InterruptedException e) {
                    return;
                }
                String why = null;
                if (active.get() == 0 && System.nanoTime() - lastEnd > idle.toNanos()) {
                    why = "idle for " + idle.toSeconds() + " s";
                } else if (!ours()) {
                    why = "its socket or key was taken away";
                } else if (!sameBuild()) {
                    why = "its build changed on disk";
                }
                if (why != null) {
                    stop(why);
                }
            }
        }, "agentx-daemon-watch");
        t.setDaemon(true);
        t.start();
    }

    private boolean ours() {
        try {
            return Files.exists(place.socket()) && MessageDigest.isEqual(Files.readAllBytes(place.key()), key);
        } catch (IOException e) {
            return false;
        }
    }

    private boolean sameBuild() {
        try {
            return DaemonPlace.identity().equals(place.identity);
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * One client: its key, its hello, its command. A connection counts as running (and keeps the
     * daemon from ending) from its key on; one that has not given it within {@link #HANDSHAKE} is
     * closed.
     */
    private void connection(SocketChannel ch, AtomicBoolean authenticated) {
        boolean counted = false;
        try (ch) {
            DataInputStream in = new DataInputStream(new BufferedInputStream(Frames.input(ch), 8192));
            DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Frames.output(ch), 8192));
            if (!authentic(in)) {
                refused.incrementAndGet();
                note(log, "refused a connection that did not give the key");
                return;
            }
            authenticated.set(true);
            active.incrementAndGet();
            counted = true;
            Frames.Frame f = Frames.read(in);
            if (f == null || f.type() != Frames.HELLO) {
                return;
            }
            Frames.Hello hello = Frames.Hello.decode(f.data());
            if (!hello.identity().equals(place.identity) || stopping != null) {
                synchronized (out) {
                    Frames.write(out, Frames.REFUSED, new byte[0]);
                }
                return;
            }
            synchronized (out) {
                Frames.write(out, Frames.READY, new byte[0]);
            }
            int code = hello.args().size() >= 2 && hello.args().get(0).equals("daemon")
                    ? manage(hello.args(), out) : command(hello, in, out);
            synchronized (out) {
                Frames.writeNumber(out, Frames.EXIT, code);
            }
        } catch (IOException | RuntimeException e) {
            // the client went away (or was closed unauthenticated): its command, if it started, ran to its end
        } finally {
            if (counted) {
                lastEnd = System.nanoTime();
                if (active.decrementAndGet() == 0) {
                    leaveFolders();
                }
            }
        }
    }

    /**
     * With no command running, the daemon leaves the runtime folders of the projects it worked in
     * (docs/protocol.md): as a process of its own, it is in one only while a command works there,
     * so the last process out clears it, and a project removed and made again is entered anew.
     */
    private void leaveFolders() {
        if (use.writeLock().tryLock()) {
            try {
                if (active.get() == 0) {
                    RuntimeFolder.leaveAll();
                }
            } finally {
                use.writeLock().unlock();
            }
        }
    }

    /** Reads the key frame by hand: its type and length are checked before a byte more is read. */
    private boolean authentic(DataInputStream in) throws IOException {
        int type = in.read();
        if (type != Frames.KEY) {
            return false;
        }
        int len = in.readInt();
        if (len != Frames.KEY_BYTES) {
            return false;
        }
        byte[] given = new byte[len];
        in.readFully(given);
        return MessageDigest.isEqual(given, key);
    }

    private int command(Frames.Hello hello, DataInputStream in, DataOutputStream out) {
        served.incrementAndGet();
        OutputStream stdout = new FrameOutput(out, Frames.OUT);
        OutputStream stderr = new FrameOutput(out, Frames.ERR);
        InputStream stdin = new FrameInput(in, out);
        Routing.bind(stderr);
        use.readLock().lock();
        try {
            return Main.run(hello.args().toArray(new String[0]), stdin, stdout, stderr, hello.env(),
                    Path.of(hello.cwd()), hello.terminal());
        } catch (RuntimeException | StackOverflowError e) {
            try {
                stderr.write(("INTERNAL: " + e + " (please report this with the command you ran)\n")
                        .getBytes(StandardCharsets.UTF_8));
            } catch (IOException ignored) {
                // the client went away
            }
            return 1;
        } finally {
            use.readLock().unlock();
            Routing.unbind();
        }
    }

    private int manage(List<String> args, DataOutputStream out) throws IOException {
        boolean json = args.contains("--json");
        long pid = ProcessHandle.current().pid();
        String text;
        if (args.get(1).equals("stop")) {
            text = json ? JsonSupport.mapper().writeValueAsString(JsonSupport.mapper().createObjectNode()
                    .put("stopping", true).put("pid", pid)) + "\n"
                    : "the daemon (pid " + pid + ") stops once its running commands end.\n";
            write(out, text);
            stop("agentx daemon stop");
            return 0;
        }
        long idleSeconds = Duration.ofNanos(System.nanoTime() - lastEnd).toSeconds();
        int running = active.get() - 1; // not this connection
        if (json) {
            com.fasterxml.jackson.databind.node.ObjectNode status = JsonSupport.mapper().createObjectNode()
                    .put("running", true).put("pid", pid).put("started", started.toString())
                    .put("served", served.get()).put("active", running).put("refused", refused.get())
                    .put("idleSeconds", idleSeconds).put("idleLimitSeconds", idle.toSeconds())
                    .put("socket", place.socket().toString()).put("log", place.log().toString());
            text = JsonSupport.mapper().writeValueAsString(status) + "\n";
        } else {
            text = "daemon pid " + pid + ", started " + started + ": " + served.get() + " commands served, " + running
                    + " running, " + refused.get() + " connections refused; ends after " + idle.toSeconds()
                    + " s without commands.\n  socket " + place.socket() + "\n  log    " + place.log() + "\n";
        }
        write(out, text);
        return 0;
    }

    private static void write(DataOutputStream out, String text) throws IOException {
        synchronized (out) {
            Frames.write(out, Frames.OUT, text.getBytes(StandardCharsets.UTF_8));
        }
    }

    /** A command's stdout or stderr: each write is a frame to its client. */
    private static final class FrameOutput extends OutputStream {
        private final DataOutputStream out;
        private final byte type;

        FrameOutput(DataOutputStream out, byte type) {
            this.out = out;
            this.type = type;
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            while (len > 0) {
                int n = Math.min(len, 1 << 20);
                synchronized (out) {
                    Frames.write(out, type, b, off, n);
                }
                off += n;
                len -= n;
            }
        }
    }

    /**
     * A command's stdin: each read asks the client for at most that many bytes, so the client reads
     * its own input no further than the command does (a shell loop's next line stays its own).
     */
    private static final class FrameInput extends InputStream {
        private final DataInputStream in;
        private final DataOutputStream out;
        private boolean end;

        FrameInput(DataInputStream in, DataOutputStream out) {
            this.in = in;
            this.out = out;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public synchronized int read(byte[] b, int off, int len) throws IOException {
            if (end) {
                return -1;
            }
            if (len == 0) {
                return 0;
            }
            synchronized (out) {
                Frames.writeNumber(out, Frames.READ, Math.min(len, 65536));
            }
            Frames.Frame f = Frames.read(in);
            if (f == null || f.type() != Frames.IN) {
                end = true;
                throw new IOException("the client went away");
            }
            byte[] data = f.data();
            if (data.length == 0) {
                end = true;
                return -1;
            }
            int n = Math.min(data.length, len);
            System.arraycopy(data, 0, b, off, n);
            return n;
        }
    }

    /**
     * The process's {@code System.err} as seen by the thread that runs a command: its client's
     * stderr (the logging system writes to {@code System.err} at each line). Other threads (those a
     * command starts, which may outlive it and serve later commands: the status writer, an MCP
     * session's) write to the daemon's log. Commands read and write their standard streams through
     * {@code CliContext}, never {@code System.in} or {@code System.out}: those stay the daemon's
     * (/dev/null and its log).
     */
    private static final class Routing {
        private static final ThreadLocal<OutputStream> CURRENT = new ThreadLocal<>();

        static void install(PrintStream log) {
            System.setErr(new PrintStream(new Routed(log), true, StandardCharsets.UTF_8));
        }

        static void bind(OutputStream err) {
            CURRENT.set(err);
        }

        static void unbind() {
            CURRENT.remove();
        }

        private static final class Routed extends OutputStream {
            private final PrintStream log;

            Routed(PrintStream log) {
                this.log = log;
            }

            @Override
            public void write(int b) {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                OutputStream bound = CURRENT.get();
                if (bound != null) {
                    try {
                        bound.write(b, off, len);
                        return;
                    } catch (IOException e) {
                        // its client is gone: the daemon's log has it
                    }
                }
                log.write(b, off, len);
            }

            @Override
            public void flush() {
                log.flush();
            }
        }
    }
}
