package dev.agentx.clarify.cli;

import java.nio.file.Path;

/**
 * {@code agentx mcp} without building picocli's command model: an agent host starts it for every
 * session and waits for its first answers, and building the model (picocli's classes, which the
 * class archive cannot hold, and its reading of the commands' annotations) is most of what the
 * process does before it can read the role's config. Only {@code [--root DIR] mcp [--agent NAME]}
 * (each option at most once, {@code --opt=value} allowed, values that picocli would pass on as
 * they are) is taken here; every other command line, help included, goes to picocli. What runs is
 * the mcp command itself, with picocli's error handling.
 */
final class QuickMcp {
    private QuickMcp() {
    }

    /** An mcp command line: {@code root} and {@code agent} are null when not given. */
    record Args(Path root, String agent) {
    }

    /** The command's arguments, or null if picocli must read this command line. */
    static Args parse(String[] args) {
        String root = null;
        int i = 0;
        for (; i < args.length && !args[i].equals("mcp"); i++) {
            String value = value(args, i, "--root");
            if (value == null || root != null) {
                return null;
            }
            root = value;
            if (!args[i].startsWith("--root=")) {
                i++;
            }
        }
        if (i == args.length) {
            return null;
        }
        String agent = null;
        for (int j = i + 1; j < args.length; j++) {
            String value = value(args, j, "--agent");
            if (value == null || agent != null) {
                return null;
            }
            agent = value;
            if (!args[j].startsWith("--agent=")) {
                j++;
            }
        }
        if (root != null && !QuickList.validPath(root)) {
            return null;
        }
        Path dir = root == null ? null : Path.of(root);
        return new Args(dir, agent);
    }

    /** The plain value of option {@code name} at {@code args[i]} ({@code --name V} or {@code --name=V}), else null. */
    private static String value(String[] args, int i, String name) {
        String a = args[i];
        String value;
        if (a.equals(name)) {
            value = i + 1 < args.length ? args[i + 1] : null;
        } else if (a.startsWith(name + "=")) {
            value = a.substring(name.length() + 1);
        } else {
            return null;
        }
        return value != null && QuickList.plainValue(value) ? value : null;
    }

    /** Runs the command as picocli would run {@link McpCommand}: same command and errors. */
    static int run(CliContext ctx, Args args) {
        if (args.root() != null) {
            ctx.root = args.root();
        }
        McpCommand command = new McpCommand(ctx);
        command.agent = args.agent();
        try {
            command.run();
        } catch (RuntimeException e) {
            return Main.failed(ctx, e);
        }
        return 0;
    }
}
