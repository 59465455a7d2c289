package dev.agentx.clarify.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code agentx clarify ask} and {@code agentx clarify answer}, the commands agents run most,
 * without building picocli's command model, for the reason of {@link QuickList}: the model costs a
 * new process more than routing and writing the question. Only plain command lines are taken here:
 * {@code --json} and {@code --root DIR} (each at most once, anywhere before the text), then
 * {@code clarify ask} or {@code clarify answer} with their own options each at most once
 * ({@code --option} as often as wanted), {@code --opt=value} allowed, and every required option and
 * text given. Every value and word of the text must be one picocli passes on as it is (no leading
 * {@code -} or {@code @}, no command's name, numbers written plainly). Any other command line,
 * including every one that is a usage error, asks for help or reads the text from stdin, goes to
 * picocli, so what picocli would print is never imitated. What runs is the command itself
 * ({@link ClarifyCommands.Ask}, {@link ClarifyCommands.Answer}), with picocli's error handling and
 * the monitor pass that follows.
 */
final class QuickWrite {
    private QuickWrite() {
    }

    /** The options of a command line taken here; {@code root} is null when not given. */
    record Args(Path root, boolean json, ClarifyCommands.Ask ask, ClarifyCommands.Answer answer) {
    }

    /** Options as read, before the command's object is made. */
    private static final class Read {
        boolean json;
        String root;
        String command;
        String issue;
        String from;
        String to;
        String topic;
        String workflow;
        String choice;
        boolean nonBlocking;
        final List<String> options = new ArrayList<>();
        final List<String> words = new ArrayList<>();
    }

    /** The command line's options, or null if picocli must read it. */
    static Args parse(String[] args, CliContext ctx) {
        Read r = read(args);
        if (r == null) {
            return null;
        }
        if (r.root != null && !QuickList.validPath(r.root)) {
            return null;
        }
        Path dir = r.root == null ? null : Path.of(r.root);
        if (r.command.equals("ask")) {
            if (r.issue == null || r.from == null || r.to == null || r.words.isEmpty() || r.choice != null) {
                return null;
            }
            ClarifyCommands.Ask ask = new ClarifyCommands.Ask(ctx);
            ask.issue = Integer.parseInt(r.issue);
            ask.from = r.from;
            ask.to = r.to;
            ask.topic = r.topic;
            ask.nonBlocking = r.nonBlocking;
            ask.options.addAll(r.options);
            ask.workflow = r.workflow;
            ask.question = r.words;
            return new Args(dir, r.json, ask, null);
        }
        if (r.words.size() < 2 || r.issue != null || r.to != null || r.topic != null || r.workflow != null
                || r.nonBlocking || !r.options.isEmpty()) {
            return null;
        }
        ClarifyCommands.Answer answer = new ClarifyCommands.Answer(ctx);
        answer.id = r.words.get(0);
        answer.from = r.from;
        answer.choice = r.choice == null ? null : Integer.valueOf(r.choice);
        answer.answer = List.copyOf(r.words.subList(1, r.words.size()));
        return new Args(dir, r.json, null, answer);
    }

    /** Reads the words of the command line; null at the first one that is not plain. */
    private static Read read(String[] args) {
        Read r = new Read();
        int i = 0;
        // the global options, then clarify and the command's name
        for (; i < args.length && !args[i].equals("clarify"); i++) {
            int taken = global(r, args, i);
            if (taken < 0) {
                return null;
            }
            i += taken;
        }
        if (args.length - i < 2 || !(args[i + 1].equals("ask") || args[i + 1].equals("answer"))) {
            return null;
        }
        r.command = args[i + 1];
        for (i += 2; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("-")) {
                if (!QuickList.plainValue(a)) {
                    return null;
                }
                r.words.add(a);
                continue;
            }
            int eq = a.indexOf('=');
            String name = a.startsWith("--") && eq > 0 ? a.substring(0, eq) : a;
            if (name.equals("--json") || name.equals("--root")) {
                int taken = global(r, args, i);
                if (taken < 0) {
                    return null;
                }
                i += taken;
                continue;
            }
            if (name.equals("--non-blocking")) {
                if (r.nonBlocking || eq > 0) {
                    return null;
                }
                r.nonBlocking = true;
                continue;
            }
            String value;
            if (eq > 0) {
                value = a.substring(eq + 1);
            } else if (i + 1 < args.length) {
                value = args[++i];
            } else {
                return null;
            }
            if (!QuickList.plainValue(value)) {
                return null;
            }
            if (!option(r, name, value)) {
                return null;
            }
        }
        return r;
    }

    /** Sets the command's option {@code name}; false if it is none of them, repeated, or no plain number where one is wanted. */
    private static boolean option(Read r, String name, String value) {
        switch (name) {
            case "--issue", "--choice" -> {
                if (!QuickList.plainNumber(value) || (name.equals("--issue") ? r.issue : r.choice) != null) {
                    return false;
                }
                if (name.equals("--issue")) {
                    r.issue = value;
                } else {
                    r.choice = value;
                }
            }
            case "--from" -> {
                if (r.from != null) {
                    return false;
                }
                r.from = value;
            }
            case "--to" -> {
                if (r.to != null) {
                    return false;
                }
                r.to = value;
            }
            case "--topic" -> {
                if (r.topic != null) {
                    return false;
                }
                r.topic = value;
            }
            case "--workflow" -> {
                if (r.workflow != null) {
                    return false;
                }
                r.workflow = value;
            }
            case "--option" -> r.options.add(value);
            default -> {
                return false;
            }
        }
        return true;
    }

    /**
     * {@code --json} or {@code --root DIR} at {@code args[i]}: the number of words it takes after
     * its own (0 or 1), or -1 if it is none of them, repeated, or given a value picocli might read
     * otherwise.
     */
    private static int global(Read r, String[] args, int i) {
        String a = args[i];
        if (a.equals("--json")) {
            if (r.json) {
                return -1;
            }
            r.json = true;
            return 0;
        }
        if (a.equals("--root") || a.startsWith("--root=")) {
            boolean inline = a.length() > "--root".length();
            String value = inline ? a.substring("--root=".length()) : i + 1 < args.length ? args[i + 1] : null;
            if (r.root != null || value == null || !QuickList.plainValue(value)) {
                return -1;
            }
            r.root = value;
            return inline ? 0 : 1;
        }
        return -1;
    }

    /** Runs the command as picocli would run it: same command, errors and monitor pass. */
    static int run(CliContext ctx, Args args) {
        if (args.root() != null) {
            ctx.root = args.root();
        }
        ctx.jsonOutput = ctx.jsonOutput || args.json();
        try {
            if (args.ask() != null) {
                args.ask().run();
            } else {
                args.answer().run();
            }
        } catch (RuntimeException e) {
            return Main.failed(ctx, e);
        }
        MonitorOutput.afterCommand(ctx, "clarify");
        return 0;
    }
}
