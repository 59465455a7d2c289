package dev.agentx.clarify.cli.daemon;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * The CLI's side of the daemon (docs/daemon.md): hands a {@code clarify} or {@code mcp} command
 * line to the running daemon of this build and relays its output, input and exit code, so the
 * command runs in a warm process; {@code daemon status} and {@code daemon stop} talk to it. When
 * no daemon answers, the command runs in this process as it always can, and a daemon is started
 * for the next one. JDK classes only, so a served command loads nothing of the application.
 */
public final class DaemonClient {
    /** {@code off} keeps every command in its own process and starts no daemon. */
    public static final String ENV = "AGENTX_DAEMON";
    /** Seconds a daemon without commands stays (default 600). */
    static final String IDLE_ENV = "AGENTX_DAEMON_IDLE_SECONDS";
    /** A start younger than this is still under way: no second daemon is started meanwhile. */
    private static final long START_MILLIS = 15_000;

    /**
     * The exit code of the client jar's process when the daemon did not run the command: bin/agentx
     * then runs it in a process of the whole jar. Outside every exit code a command has.
     */
    public static final int NOT_SERVED = 79;
    /** Set on a process that must not hand its command to the daemon (bin/agentx, after NOT_SERVED). */
    public static final String ASKED_PROPERTY = "agentx.daemon.asked";

    private DaemonClient() {
    }

    /**
     * The small client jar's entry (bin/agentx): the command's exit code, or {@link #NOT_SERVED} if
     * this process did not run it.
     */
    public static void main(String[] args) {
        int code = serve(args);
        System.exit(code < 0 ? NOT_SERVED : code);
    }

    /**
     * Runs the command line through the daemon and returns its exit code, or -1 if this process
     * must run it: the daemon is off or absent, or the command is not one it serves.
     */
    public static int serve(String[] args) {
        if (Boolean.getBoolean(ASKED_PROPERTY)) {
            return -1;
        }
        Map<String, String> env = System.getenv();
        String command = command(args);
        if ("daemon".equals(command)) {
            return manage(args, env);
        }
        if (!("clarify".equals(command) || "mcp".equals(command)) || off(env)
                // a command that sets its own logging runs with it, in its own process
                || env.containsKey("AGENTX_LOG_LEVEL") || env.containsKey("AGENTX_LOG_FORMAT")) {
            return -1;
        }
        DaemonPlace place;
        try {
            place = DaemonPlace.of(env);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        SocketChannel ch = usable(place) ? place.connect() : null;
        if (ch == null) {
            start(place, env);
            return -1;
        }
        return talk(ch, place, args, env, null);
    }

    /** Whether {@code AGENTX_DAEMON} turns the daemon off. */
    static boolean off(Map<String, String> env) {
        String v = env.getOrDefault(ENV, "").strip().toLowerCase(java.util.Locale.ROOT);
        return v.equals("off") || v.equals("0") || v.equals("false") || v.equals("no");
    }

    /** The first word that is neither an option nor {@code --root}'s value (as bin/agentx finds it). */
    static String command(String[] args) {
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--root") || a.equals("--database-url") || a.equals("--repo")) {
                i++;
            } else if (!a.startsWith("-")) {
                return a;
            } else if (a.equals("--")) {
                return null;
            }
        }
        return null;
    }

    private static boolean usable(DaemonPlace place) {
        try {
            return place.private_() && Files.exists(place.socket());
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * Starts a daemon of this build in the background, unless one is being started: its own
     * session, its output in its log, nothing of this process's standard streams (a caller reading
     * this command's output to its end must not wait for the daemon), and of the environment only
     * what a Java runtime needs: each command brings its own.
     */
    static boolean start(DaemonPlace place, Map<String, String> env) {
        try {
            place.make();
            if (!place.private_()) {
                return false;
            }
            Path marker = place.starting();
            try {
                FileTime t = Files.getLastModifiedTime(marker);
                if (System.currentTimeMillis() - t.toMillis() < START_MILLIS) {
                    return false;
                }
            } catch (NoSuchFileException e) {
                // no start under way
            }
            Files.write(marker, new byte[0]);
            List<String> cmd = new ArrayList<>();
            if (Files.isExecutable(Path.of("/usr/bin/setsid"))) {
                cmd.add("/usr/bin/setsid");
            }
            cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            cmd.addAll(List.of("-XX:+UseSerialGC", "-XX:-UsePerfData", "-XX:+ExitOnOutOfMemoryError",
                    "-XX:TieredStopAtLevel=1", "-Xss1m",
                    // the class by name: loading it would load what it uses
                    "-cp", DaemonPlace.classPath(), "dev.agentx.clarify.cli.daemon.DaemonServer",
                    place.dir.toString(), place.name));
            ProcessBuilder pb = new ProcessBuilder(cmd).directory(place.dir.toFile());
            Map<String, String> child = pb.environment();
            child.clear();
            for (String k : List.of("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER", IDLE_ENV, DaemonPlace.DIR_ENV)) {
                String v = env.get(k);
                if (v != null) {
                    child.put(k, v);
                }
            }
            pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            pb.redirectOutput(ProcessBuilder.Redirect.appendTo(place.log().toFile()));
            pb.redirectErrorStream(true);
            pb.start();
            return true;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * Sends the command line and relays until the exit code. Returns -1 if the daemon refused it
     * before running it (this process runs it then); if the daemon goes away while the command
     * runs, its outcome is unknown and this process says so rather than run it a second time.
     * {@code sink}: where output goes instead of this process's streams (status and stop).
     */
    static int talk(SocketChannel ch, DaemonPlace place, String[] args, Map<String, String> env, OutputStream sink) {
        OutputStream stdout = sink != null ? sink : new FileOutputStream(FileDescriptor.out);
        OutputStream stderr = sink != null ? sink : new FileOutputStream(FileDescriptor.err);
        boolean ready = false;
        try (ch) {
            byte[] key = Files.readAllBytes(place.key());
            DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Frames.output(ch), 8192));
            DataInputStream in = new DataInputStream(new BufferedInputStream(Frames.input(ch), 8192));
            Frames.Hello hello = new Frames.Hello(place.identity, Path.of("").toAbsolutePath().toString(),
                    System.console() != null, Arrays.asList(args), env);
            synchronized (out) {
                Frames.write(out, Frames.KEY, key);
                Frames.write(out, Frames.HELLO, hello.encode());
            }
            StdinPump pump = null;
            while (true) {
                Frames.Frame f = Frames.read(in);
                if (f == null) {
                    break;
                }
                switch (f.type()) {
                    case Frames.READY -> ready = true;
                    case Frames.REFUSED -> {
                        return -1;
                    }
                    case Frames.OUT -> relay(stdout, f.data());
                    case Frames.ERR -> relay(stderr, f.data());
                    case Frames.READ -> {
                        if (pump == null) {
                            pump = new StdinPump(out);
                            pump.start();
                        }
                        pump.requests.add(f.number());
                    }
                    case Frames.EXIT -> {
                        return f.number();
                    }
                    default -> throw new IOException("an unknown frame " + f.type());
                }
            }
        } catch (IOException | RuntimeException e) {
            if (!ready) {
                return -1;
            }
        }
        if (!ready) {
            return -1; // closed before the command ran (a daemon stopping): this process runs it
        }
        String message = "agentx: the daemon ended while running this command, so whether it took effect is not "
                + "known; look before running it again (its log: " + place.log() + ").\n";
        try {
            stderr.write(message.getBytes(StandardCharsets.UTF_8));
            stderr.flush();
        } catch (IOException ignored) {
            // nowhere left to say it
        }
        return 1;
    }

    /**
     * Writes a command's output to this process's stream. A stream closed on the reader's side (a
     * pipe into {@code head}) drops the rest, as a command in its own process goes on when its
     * output is gone: the command still runs to its end and its exit code still comes.
     */
    private static void relay(OutputStream stream, byte[] data) {
        try {
            stream.write(data);
            stream.flush();
        } catch (IOException e) {
            // the reader went away: nothing more to show it
        }
    }

    /** Reads this process's standard input as the daemon asks for it, never ahead of that. */
    private static final class StdinPump extends Thread {
        final LinkedBlockingQueue<Integer> requests = new LinkedBlockingQueue<>();
        private final DataOutputStream out;
        private final InputStream stdin = new FileInputStream(FileDescriptor.in);

        StdinPump(DataOutputStream out) {
            super("agentx-stdin");
            setDaemon(true);
            this.out = out;
        }

        @Override
        public void run() {
            try {
                while (true) {
                    int max = Math.max(1, Math.min(requests.take(), 65536));
                    byte[] buf = new byte[max];
                    int n = stdin.read(buf, 0, max);
                    synchronized (out) {
                        Frames.write(out, Frames.IN, buf, 0, Math.max(n, 0));
                    }
                }
            } catch (InterruptedException | IOException e) {
                // the command ended, or the daemon went away: the main thread reports
            }
        }
    }

    /** {@code agentx daemon status|stop}: works whatever {@code AGENTX_DAEMON} says. */
    private static int manage(String[] args, Map<String, String> env) {
        List<String> words = new ArrayList<>();
        boolean json = false;
        boolean help = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--root") || a.equals("--database-url") || a.equals("--repo")) {
                i++; // its value: no word of this command (the daemon serves every project)
            } else if (a.equals("--json")) {
                json = true;
            } else if (a.equals("-h") || a.equals("--help")) {
                help = true;
            } else if (!a.startsWith("-")) {
                words.add(a);
            }
        }
        String what = words.size() == 2 ? words.get(1) : "";
        if (help || !(what.equals("status") || what.equals("stop"))) {
            boolean asked = help || words.size() == 1;
            java.io.PrintStream to = asked ? System.out : System.err;
            to.println("Usage: agentx daemon status|stop [--json]");
            to.println("  status  whether this build's daemon runs (pid, commands served, idle time)");
            to.println("  stop    stops it once its running commands end");
            to.println("The daemon runs clarify and mcp commands in a warm process (docs/daemon.md); "
                    + ENV + "=off turns it off.");
            return asked ? 0 : 2;
        }
        DaemonPlace place;
        try {
            place = DaemonPlace.of(env);
        } catch (IOException e) {
            System.err.println("agentx: " + e.getMessage());
            return 1;
        }
        SocketChannel ch = usable(place) ? place.connect() : null;
        if (ch == null) {
            if (json) {
                // no string in it: the client has no JSON library, and writes no escapes of its own
                System.out.println("{\"running\":false,\"enabled\":" + !off(env) + "}");
            } else {
                System.out.println("no daemon runs for this build" + (off(env) ? " (" + ENV + "=off)" : "")
                        + "; the next clarify or mcp command starts one" + (off(env) ? " when it is on" : "") + ".");
            }
            return 0;
        }
        String[] request = json ? new String[] {"daemon", what, "--json"} : new String[] {"daemon", what};
        int code = talk(ch, place, request, Map.of(), null);
        return code < 0 ? 1 : code;
    }
}
