package dev.agentx.clarify.cli;

import java.nio.file.Path;

/**
 * {@code agentx clarify show ID} without building picocli's command model, for the same reason
 * as {@link QuickList}: picocli's classes cannot be in the AppCDS archive, and loading them and
 * reading its annotations cost a new process more than reading one record. Only command lines
 * made of {@code --json} and {@code --root DIR} (each at most once, {@code --opt=value} allowed,
 * before {@code show}), then {@code clarify show} and an id that picocli would pass on as it is
 * (no leading {@code -} or {@code @}, no command's name) are taken here; every other command line,
 * with help, {@code --database-url} or {@code --repo}, goes to picocli. What runs is the show
 * command itself, with picocli's error handling and the monitor pass that follows.
 */
final class QuickShow {
    private QuickShow() {
    }

    /** A show command line: {@code root} is null when not given. */
    record Args(Path root, boolean json, String id) {
    }

    /** The show's arguments, or null if picocli must read this command line. */
    static Args parse(String[] args) {
        boolean json = false;
        String root = null;
        int i = 0;
        for (; i < args.length && !args[i].equals("clarify"); i++) {
            String a = args[i];
            if (a.equals("--json")) {
                if (json) {
                    return null;
                }
                json = true;
            } else if (a.equals("--root") || a.startsWith("--root=")) {
                String value = a.length() > "--root".length() ? a.substring("--root=".length())
                        : i + 1 < args.length ? args[++i] : null;
                if (root != null || value == null || !QuickList.plainValue(value)) {
                    return null;
                }
                root = value;
            } else {
                return null;
            }
        }
        // clarify, show, the id: nothing before or after them but the options above
        if (args.length - i != 3 || !args[i + 1].equals("show") || !QuickList.plainValue(args[i + 2])) {
            return null;
        }
        if (root != null && !QuickList.validPath(root)) {
            return null;
        }
        Path dir = root == null ? null : Path.of(root);
        return new Args(dir, json, args[i + 2]);
    }

    /** Runs the show as picocli would run {@link ClarifyCommands.Show}: same command, errors and monitor pass. */
    static int run(CliContext ctx, Args args) {
        if (args.root() != null) {
            ctx.root = args.root();
        }
        ctx.jsonOutput = ctx.jsonOutput || args.json();
        ClarifyCommands.Show command = new ClarifyCommands.Show(ctx);
        command.id = args.id();
        try {
            command.run();
        } catch (RuntimeException e) {
            return Main.failed(ctx, e);
        }
        MonitorOutput.afterCommand(ctx, "clarify");
        return 0;
    }
}
