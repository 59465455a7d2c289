package dev.agentx.clarify.cli;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Set;

/**
 * The list ({@code agentx clarify} and {@code agentx clarify --issue N}) without building picocli's
 * command model, which costs a new process more than the list itself. Only command lines made of
 * nothing but {@code clarify}, {@code --json}, {@code --root DIR} and, after {@code clarify},
 * {@code --issue N} (each option at most once, {@code --opt=value} allowed) are taken here; any
 * other command line, including every one that would be a usage error or ask for help, goes to
 * picocli, so what picocli would print is never imitated. A value that picocli might read
 * differently (one that starts with {@code -} or {@code @}, names a command, or is no plain
 * positive number) also leaves the decision to picocli. What runs is the list command itself,
 * with picocli's error handling and the monitor pass that follows.
 */
final class QuickList {
    /** Words picocli reads as (sub)command names at the top level or under {@code clarify}. */
    private static final Set<String> COMMANDS = Set.of("clarify", "hook", "state", "ready", "monitor", "serve", "sync", "completion", "init", "setup", "deliveries", "notifications", "mcp", "dashboard", "store",
            "list", "show", "ask", "answer", "followup", "resolve", "escalate", "abandon", "accept", "ingest", "stale", "digest",
            "start", "finish", "copy");

    private QuickList() {
    }

    /** A list command line: {@code root} and {@code issue} are null when not given. */
    record Args(Path root, boolean json, Integer issue) {
    }

    /** The list's arguments, or null if picocli must read this command line. */
    static Args parse(String[] args) {
        boolean clarify = false;
        boolean json = false;
        String root = null;
        String issue = null;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String name = a;
            String value = null;
            int eq = a.indexOf('=');
            if (a.startsWith("--") && eq > 0) {
                name = a.substring(0, eq);
                value = a.substring(eq + 1);
            }
            switch (name) {
                case "clarify" -> {
                    if (clarify) {
                        return null;
                    }
                    clarify = true;
                }
                case "--json" -> {
                    if (json || value != null) {
                        return null;
                    }
                    json = true;
                }
                case "--root", "--issue" -> {
                    if (value == null) {
                        if (i + 1 == args.length) {
                            return null;
                        }
                        value = args[++i];
                    }
                    if (name.equals("--root")) {
                        if (root != null || !plainValue(value)) {
                            return null;
                        }
                        root = value;
                    } else {
                        if (!clarify || issue != null || !plainNumber(value)) {
                            return null;
                        }
                        issue = value;
                    }
                }
                default -> {
                    return null;
                }
            }
        }
        if (!clarify) {
            return null;
        }
        if (root != null && !QuickList.validPath(root)) {
            return null;
        }
        Path dir = root == null ? null : Path.of(root);
        return new Args(dir, json, issue == null ? null : Integer.valueOf(issue));
    }

    static boolean plainValue(String v) {
        return !v.isEmpty() && v.charAt(0) != '-' && v.charAt(0) != '@' && !COMMANDS.contains(v);
    }

    /** Whether a {@code --root} value is a path this system takes; picocli reports the others. */
    static boolean validPath(String v) {
        try {
            Path.of(v);
            return true;
        } catch (InvalidPathException e) {
            return false;
        }
    }

    /** 1 to 999999999 written plainly: no sign, no leading zero, nothing a converter might read otherwise. */
    static boolean plainNumber(String v) {
        if (v.isEmpty() || v.length() > 9 || v.charAt(0) < '1' || v.charAt(0) > '9') {
            return false;
        }
        for (int i = 1; i < v.length(); i++) {
            if (v.charAt(i) < '0' || v.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }

    /** Runs the list as picocli would run {@link ClarifyCommands}: same command, errors and monitor pass. */
    static int run(CliContext ctx, Args args) {
        if (args.root() != null) {
            ctx.root = args.root();
        }
        ctx.jsonOutput = ctx.jsonOutput || args.json();
        ClarifyCommands command = new ClarifyCommands(ctx);
        command.issue = args.issue();
        try {
            command.run();
        } catch (RuntimeException e) {
            return Main.failed(ctx, e);
        }
        MonitorOutput.afterCommand(ctx, "clarify");
        return 0;
    }
}
