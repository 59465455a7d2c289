package dev.agentx.clarify.cli;

import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;

/**
 * The command tree of {@code agentx}: each command's name, class and subcommands, in the order the
 * help lists them. picocli learns the tree from here rather than from
 * {@code @Command(subcommands = ...)}, so that a run can build the model of just the commands its
 * command line names.
 *
 * <p>Building picocli's model of a command reflects on its class and annotations, and building all
 * 21 commands cost every CLI process about as much as the work of a typical command. A lazy model
 * ({@link #lazy}) has the commands the command line names (the prescan), built as usual, and for
 * every other command a bare placeholder with just its name, so picocli tells subcommand names
 * from other words exactly as with the full model. {@link Main} runs a command line on the lazy
 * model only when picocli parsed it without error, no placeholder took part and no help or
 * version was asked for (the only output that shows other commands); anything else runs again
 * on the full model ({@link #full}), so what is printed never depends on the shortcut.
 */
final class Commands {
    /** A command: its name (as in its {@code @Command}), class and subcommands. */
    record Node(String name, Class<?> type, List<Node> children) {
        Node(String name, Class<?> type) {
            this(name, type, List.of());
        }

        Node child(String word) {
            for (Node c : children) {
                if (c.name.equals(word)) {
                    return c;
                }
            }
            return null;
        }
    }

    static final Node TREE = new Node("agentx", AgentxCommand.class, List.of(
            new Node("clarify", ClarifyCommands.class, List.of(
                    new Node("show", ClarifyCommands.Show.class),
                    new Node("ask", ClarifyCommands.Ask.class),
                    new Node("answer", ClarifyCommands.Answer.class),
                    new Node("followup", ClarifyCommands.FollowUp.class),
                    new Node("resolve", ClarifyCommands.Resolve.class),
                    new Node("escalate", ClarifyCommands.Escalate.class),
                    new Node("abandon", ClarifyCommands.Abandon.class),
                    new Node("accept", ClarifyCommands.Accept.class),
                    new Node("ingest", ClarifyCommands.Ingest.class),
                    new Node("stale", ClarifyStaleCommand.class),
                    new Node("digest", ClarifyDigestCommand.class))),
            new Node("hook", HookCommand.class, List.of(
                    new Node("start", HookCommand.Start.class),
                    new Node("finish", HookCommand.Finish.class))),
            new Node("state", StateCommand.class),
            new Node("ready", ReadyCommand.class),
            new Node("monitor", MonitorCommand.class),
            new Node("serve", ServeCommand.class),
            new Node("sync", SyncCommand.class)));

    /** The user object of a placeholder command. */
    private static final class Placeholder {
    }

    private Commands() {
    }

    /** Every command, as {@code @Command(subcommands = ...)} would have built them. */
    static CommandLine full(CommandLine.IFactory factory) {
        return build(TREE, factory, null);
    }

    /**
     * The commands named along {@code args} (a word that is a subcommand of the command reached so
     * far, up to {@code --}), with placeholders for the others.
     */
    static CommandLine lazy(CommandLine.IFactory factory, String[] args) {
        Map<Node, Boolean> named = new IdentityHashMap<>();
        Node at = TREE;
        for (String a : args) {
            if (a.equals("--")) {
                break;
            }
            Node c = at.child(a);
            if (c != null) {
                named.put(c, Boolean.TRUE);
                at = c;
            }
        }
        return build(TREE, factory, named);
    }

    /** @param named the commands to build, or null for all */
    private static CommandLine build(Node node, CommandLine.IFactory factory, Map<Node, Boolean> named) {
        CommandLine cl;
        try {
            cl = new CommandLine(factory.create(node.type()), factory);
        } catch (Exception e) {
            throw new IllegalStateException("cannot create command " + node.name(), e);
        }
        for (Node c : node.children()) {
            if (named == null || named.containsKey(c)) {
                cl.addSubcommand(c.name(), build(c, factory, named));
            } else {
                cl.addSubcommand(c.name(), CommandSpec.wrapWithoutInspection(new Placeholder()));
            }
        }
        return cl;
    }

    /**
     * Whether a lazy model's parse can run as it is: no placeholder took part, no help or version
     * was asked for, and the command to run is a leaf (a command with subcommands that runs
     * itself either prints its usage, which lists the subcommands, or is the list, which
     * {@link QuickList} takes).
     */
    static boolean runsLazily(CommandLine.ParseResult parsed) {
        CommandLine.ParseResult last = parsed;
        for (CommandLine.ParseResult p = parsed; p != null; p = p.subcommand()) {
            if (p.commandSpec().userObject() instanceof Placeholder || p.isUsageHelpRequested()
                    || p.isVersionHelpRequested()) {
                return false;
            }
            last = p;
        }
        return last.commandSpec().subcommands().isEmpty();
    }
}
