package dev.agentx.clarify.channel;

import dev.agentx.clarify.config.AgentSettings;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@code channel = "command"}: runs the role's program with its argv (no shell, so no user text is
 * ever interpreted), the request JSON on stdin and the main fields also as {@code AGENTX_*}
 * environment variables; takes the answer from stdout ({@link AnswerParser}). A program that runs
 * past {@code timeout_seconds} or prints more than {@code max_output_bytes} is killed with all its
 * descendants; a non-zero exit is a failure. The working directory is the project root, and a
 * relative program path with a slash ({@code ./agents/architect}) is resolved against it.
 */
public final class CommandChannel implements AnswerChannel {
    /** How much of stderr is kept for the error message. */
    static final int STDERR_TAIL = 2000;
    /** How long to wait for the output pipes to close after the process ended (a grandchild may hold them). */
    private static final long DRAIN_MILLIS = 2000;

    private final String role;
    private final AgentSettings settings;
    private final Path workDir;
    private final Map<String, String> env;
    private final RequestJson json;

    public CommandChannel(String role, AgentSettings settings, Path workDir, Map<String, String> env, RequestJson json) {
        if (settings.command().isEmpty()) {
            throw new IllegalArgumentException("[agents." + role + "] has channel = \"command\" but no command");
        }
        this.role = role;
        this.settings = settings;
        this.workDir = workDir;
        this.env = Map.copyOf(env);
        this.json = json;
    }

    @Override
    public Delivery ask(QuestionRequest request) {
        String who = role + "'s command agent (" + settings.command().get(0) + ")";
        byte[] input = json.encode(request);
        ProcessBuilder pb = new ProcessBuilder(argv()).directory(workDir.toFile());
        Map<String, String> childEnv = pb.environment();
        childEnv.clear();
        childEnv.putAll(env);
        childEnv.putAll(variables(request));
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            return new Delivery.Failed("cannot start " + who + ": " + e.getMessage());
        }
        AtomicBoolean overflow = new AtomicBoolean();
        Collector out = new Collector(p.getInputStream(), settings.maxOutputBytes(), () -> {
            overflow.set(true);
            killTree(p);
        });
        Collector err = new Collector(p.getErrorStream(), -STDERR_TAIL, null);
        Thread writer = new Thread(() -> feed(p.getOutputStream(), input), "agentx-command-stdin");
        writer.setDaemon(true);
        out.start();
        err.start();
        writer.start();
        boolean finished;
        try {
            finished = p.waitFor(settings.timeoutSeconds(), TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            killTree(p);
            return new Delivery.Failed(who + " was interrupted");
        }
        if (!finished) {
            killTree(p);
            out.finish();
            err.finish();
            return new Delivery.Failed(who + " gave no answer within " + settings.timeoutSeconds()
                    + " s (timeout_seconds); it was killed with its child processes");
        }
        out.finish();
        err.finish();
        if (overflow.get()) {
            return new Delivery.Failed(who + " printed more than " + settings.maxOutputBytes()
                    + " bytes (max_output_bytes); it was killed");
        }
        if (p.exitValue() != 0) {
            String tail = AnswerParser.tail(err.text());
            return new Delivery.Failed(who + " exited with code " + p.exitValue() + (tail.isEmpty() ? "" : ": " + tail));
        }
        return AnswerParser.parse(out.text(), false, request.options(), who, "command");
    }

    private List<String> argv() {
        List<String> argv = new ArrayList<>(settings.command());
        String program = argv.get(0);
        if (program.contains("/") && !Path.of(program).isAbsolute()) {
            argv.set(0, workDir.resolve(program).normalize().toString());
        }
        return argv;
    }

    /** The request's main fields as environment variables, for agents that do not parse JSON. */
    static Map<String, String> variables(QuestionRequest r) {
        return Map.of("AGENTX_CLARIFICATION_ID", r.id(),
                "AGENTX_ISSUE", Integer.toString(r.issue()),
                "AGENTX_FROM", r.from(),
                "AGENTX_TO", r.to(),
                "AGENTX_TOPIC", r.topic(),
                "AGENTX_ROUND", Integer.toString(r.round()),
                "AGENTX_QUESTION", r.question(),
                "AGENTX_OPTIONS", String.join("\n", r.options()));
    }

    private static void feed(OutputStream stdin, byte[] input) {
        try (OutputStream s = stdin) {
            s.write(input);
        } catch (IOException e) {
            // the agent closed stdin without reading it all; its output decides
        }
    }

    /** Kills the process and every descendant (snapshotted first: once the parent dies they are re-parented). */
    static void killTree(Process p) {
        List<ProcessHandle> descendants = p.descendants().toList();
        p.destroyForcibly();
        for (ProcessHandle h : descendants) {
            h.descendants().forEach(ProcessHandle::destroyForcibly);
            h.destroyForcibly();
        }
    }

    /**
     * Reads a stream on its own thread. {@code limit > 0}: keep at most that many bytes and call
     * {@code onOverflow} once past it; {@code limit < 0}: keep only the last {@code -limit} bytes.
     */
    private static final class Collector extends Thread {
        private final InputStream in;
        private final int limit;
        private final Runnable onOverflow;
        private final ByteArrayOutputStream buf = new ByteArrayOutputStream();

        Collector(InputStream in, int limit, Runnable onOverflow) {
            super("agentx-command-output");
            setDaemon(true);
            this.in = in;
            this.limit = limit;
            this.onOverflow = onOverflow;
        }

        @Override
        public void run() {
            byte[] chunk = new byte[8192];
            boolean overflowed = false;
            try (InputStream s = in) {
                int n;
                while ((n = s.read(chunk)) >= 0) {
                    synchronized (buf) {
                        if (limit > 0) {
                            int room = limit - buf.size();
                            buf.write(chunk, 0, Math.max(0, Math.min(room, n)));
                            if (n > room && !overflowed) {
                                overflowed = true;
                                onOverflow.run();
                            }
                        } else {
                            buf.write(chunk, 0, n);
                            if (buf.size() > -limit * 2) {
                                byte[] all = buf.toByteArray();
                                buf.reset();
                                buf.write(all, all.length + limit, -limit);
                            }
                        }
                    }
                }
            } catch (IOException e) {
                // the process was killed or closed the pipe
            }
        }

        void finish() {
            try {
                join(DRAIN_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        String text() {
            synchronized (buf) {
                byte[] all = buf.toByteArray();
                int from = limit < 0 ? Math.max(0, all.length + limit) : 0;
                return new String(all, from, all.length - from, StandardCharsets.UTF_8);
            }
        }
    }
}
