package dev.agentx.clarify.cli;

import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.store.postgres.DatabaseUrl;
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
 * from other words exactly as with the full model. {@link #execute} runs a command line on the
 * lazy model only when picocli parsed it without error, no placeholder took part and no help or
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
                    new Node("list", ClarifyCommands.ListActive.class),
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
            new Node("init", InitCommand.class),
            new Node("state", StateCommand.class),
            new Node("ready", ReadyCommand.class),
            new Node("gate", GateCommand.class),
            new Node("monitor", MonitorCommand.class),
            new Node("serve", ServeCommand.class),
            new Node("setup", SetupCommand.class),
            new Node("deliveries", DeliveriesCommand.class),
            new Node("notifications", NotificationsCommand.class),
            new Node("sync", SyncCommand.class),
            new Node("completion", CompletionCommand.class),
            new Node("mcp", McpCommand.class),
            new Node("dashboard", DashboardCommand.class),
            new Node("store", StoreCommand.class, List.of(
                    new Node("copy", StoreCommand.Copy.class)))));

    /** The user object of a placeholder command. */
    private static final class Placeholder {
    }

    private Commands() {
    }

    /**
     * Runs a command line with picocli: first on the lazy model if {@code tryLazy}, and on the
     * full model if that declines (see the class comment); then the monitor pass after a command
     * that triggers it.
     */
    static int execute(String[] args, CliContext ctx, boolean tryLazy) {
        Factory factory = new Factory(ctx);
        if (tryLazy) {
            boolean json = ctx.jsonOutput;
            CommandLine model = configure(lazy(factory, args), ctx);
            LazyRun run = new LazyRun(ctx);
            model.setParameterExceptionHandler(run);
            model.setExecutionStrategy(run);
            int code = model.execute(args);
            if (!run.declined) {
                return after(ctx, model, code);
            }
            ctx.root = null; // set again by the full model's parse
            ctx.databaseUrl = null;
            ctx.repo = null;
            ctx.jsonOutput = json;
        }
        return after(ctx, configure(full(factory), ctx), args);
    }

    /*
     * The handlers are classes, not lambdas: a lambda's archived proxy makes the AppCDS dump link
     * the picocli interface it implements, and picocli's classes (compiled for Java 5) are then
     * left out of the archive ("Old class has been linked"), so every command loaded them from
     * the jar, which costs opening the whole jar.
     */

    /**
     * On the lazy model: a usage error, help, or a command the lazy model lacks is declined
     * without printing anything, and the full model runs the command line again and says what it
     * has to say; anything else runs as picocli's default strategy runs it.
     */
    private static final class LazyRun implements CommandLine.IParameterExceptionHandler,
            CommandLine.IExecutionStrategy {
        private final CommandLine.IExecutionStrategy runLast = new CommandLine.RunLast();
        private final CliContext ctx;
        boolean declined;

        LazyRun(CliContext ctx) {
            this.ctx = ctx;
        }

        @Override
        public int handleParseException(CommandLine.ParameterException ex, String[] args) {
            declined = true;
            return 0;
        }

        @Override
        public int execute(CommandLine.ParseResult parsed) {
            if (!runsLazily(parsed)) {
                declined = true;
                return 0;
            }
            Integer refused = rootNotForDataDir(ctx, parsed);
            return refused != null ? refused : runLast.execute(parsed);
        }
    }

    /** A command that threw ends with its error code and message. */
    private record Failure(CliContext ctx) implements CommandLine.IExecutionExceptionHandler {
        @Override
        public int handleExecutionException(Exception ex, CommandLine commandLine, CommandLine.ParseResult parsed) {
            return Main.failed(ctx, ex);
        }
    }

    /**
     * Of picocli's suggestions for a mistyped word, the ones fewest edits away (at most 3), so that
     * a typo gets the command it was meant to be, not every command sharing a few letters with it.
     */
    static List<String> nearest(String typed, List<String> suggestions) {
        String word = typed.replaceFirst("=.*", "");
        int best = Integer.MAX_VALUE;
        List<String> out = new java.util.ArrayList<>();
        for (String s : suggestions) {
            int d = edits(word, s);
            if (d > 3) {
                continue;
            }
            if (d < best) {
                best = d;
                out.clear();
            }
            if (d == best && out.size() < 3) {
                out.add(s);
            }
        }
        return out;
    }

    /** Levenshtein distance. */
    private static int edits(String a, String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
            }
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }

    /** A usage error: "USAGE: ..." and where to find help on stderr, or the error as JSON with --json. */
    /**
     * The first argument before any {@code --} that starts with '-' but is no option of the command
     * ({@code "- JWT"}, {@code "-5 or +5?"}): picocli takes it for an option, so a question, answer
     * or note written so is missed, and the message should say how to give it. Null if none.
     */
    static String textLikeAnOption(CommandLine c, String[] args) {
        for (String a : args) {
            if (a.equals("--")) {
                return null;
            }
            if (a.startsWith("-") && a.length() > 1 && !a.startsWith("--") && c.getCommandSpec().findOption(a) == null
                    && (a.chars().anyMatch(Character::isWhitespace) || !Character.isLetter(a.charAt(1)))) {
                String shown = a.replaceAll("\\s+", " ");
                return shown.length() > 40 ? shown.substring(0, 40) + "..." : shown;
            }
        }
        return null;
    }

    private record Usage(CliContext ctx) implements CommandLine.IParameterExceptionHandler {
        @Override
        public int handleParseException(CommandLine.ParameterException ex, String[] args) {
            CommandLine c = ex.getCommandLine();
            String help = "Try '" + c.getCommandSpec().qualifiedName() + " --help' for usage and examples.";
            // picocli quotes what it could not match: a database URL given to a command that takes none
            // would show its password
            String message = DatabaseUrl.redact(ex.getMessage());
            if (ex instanceof CommandLine.UnmatchedArgumentException u) {
                List<String> near = nearest(u.getUnmatched().isEmpty() ? "" : u.getUnmatched().get(0), u.getSuggestions());
                if (!near.isEmpty()) {
                    message += ". Did you mean " + String.join(" or ", near.stream().map(s -> "'" + s + "'").toList())
                            + "?";
                }
            }
            String dashed = textLikeAnOption(c, args);
            if (dashed != null) {
                message += (message.endsWith("?") ? " " : ". ") + "A text that starts with '-' (" + dashed + ") goes "
                        + "after '--', which ends the options: " + c.getCommandSpec().qualifiedName() + " ... -- \""
                        + dashed + "\"";
            }
            if (ctx.json()) {
                return ctx.error(ErrorCode.USAGE, message + (message.endsWith("?") ? " " : ". ") + help);
            }
            ctx.err.println("USAGE: " + message);
            ctx.err.println(help);
            ctx.err.flush();
            return ErrorCode.USAGE.exitCode();
        }
    }

    private static int after(CliContext ctx, CommandLine cl, String[] args) {
        return after(ctx, cl, cl.execute(args));
    }

    private static int after(CliContext ctx, CommandLine cl, int code) {
        if (code == 0) {
            MonitorOutput.afterCommand(ctx, commandRun(cl.getParseResult()));
        }
        return code;
    }

    /** The top-level command that ran, or null if none did or help or the version was shown instead. */
    private static String commandRun(CommandLine.ParseResult parsed) {
        if (parsed == null || !parsed.hasSubcommand()) {
            return null;
        }
        for (CommandLine.ParseResult p = parsed; p != null; p = p.subcommand()) {
            if (p.isUsageHelpRequested() || p.isVersionHelpRequested()) {
                return null;
            }
        }
        return parsed.subcommand().commandSpec().name();
    }

    /** Error handling and streams. */
    private static CommandLine configure(CommandLine cl, CliContext ctx) {
        cl.setOut(ctx.out);
        cl.setErr(ctx.err);
        cl.setExecutionExceptionHandler(new Failure(ctx));
        cl.setParameterExceptionHandler(new Usage(ctx));
        cl.setExecutionStrategy(new HelpAsJson(ctx));
        return cl;
    }

    /**
     * Runs the command as picocli's default strategy does, except that with {@code --json} the
     * help and the version asked for are JSON on stdout too, like every other output
     * ({@link #printUsage}).
     */
    private record HelpAsJson(CliContext ctx) implements CommandLine.IExecutionStrategy {
        @Override
        public int execute(CommandLine.ParseResult parsed) {
            if (ctx.json()) {
                // picocli's order: the first command asked for its help or version, help first
                for (CommandLine.ParseResult p = parsed; p != null; p = p.subcommand()) {
                    if (p.isUsageHelpRequested()) {
                        printUsage(ctx, p.commandSpec().commandLine());
                        return 0;
                    }
                    if (p.isVersionHelpRequested()) {
                        com.fasterxml.jackson.databind.node.ObjectNode o = ctx.mapper().createObjectNode();
                        o.put("version", Main.version());
                        o.put("commit", Main.commit());
                        o.put("text", String.join("\n", p.commandSpec().version()));
                        ctx.printJson(o);
                        return 0;
                    }
                }
            }
            Integer refused = rootNotForDataDir(ctx, parsed);
            return refused != null ? refused : new CommandLine.RunLast().execute(parsed);
        }
    }

    /** The commands that work on the server's data dir, not on a project's .agentx/. */
    private static final java.util.Set<String> DATA_DIR_COMMANDS = java.util.Set.of("serve", "setup", "deliveries",
            "notifications", "sync", "store");

    /**
     * A usage error when {@code --root} (a project's folder) is given to a command that works on the
     * server's data dir, which would otherwise ignore it; null when the command may run.
     */
    private static Integer rootNotForDataDir(CliContext ctx, CommandLine.ParseResult parsed) {
        String command = commandRun(parsed);
        if (command == null || ctx.root == null || !DATA_DIR_COMMANDS.contains(command)) {
            return null;
        }
        return ctx.error(ErrorCode.USAGE, "--root names a project's folder (its .agentx/); 'agentx " + command
                + "' works on the server's data dir: set AGENTX_DATA_DIR instead (default ./agentx-data).");
    }

    /**
     * A command's usage on stdout: as picocli writes it, or with {@code --json} as
     * {@code {"command": "agentx clarify ask", "usage": "..."}}.
     */
    static void printUsage(CliContext ctx, CommandLine cl) {
        if (!ctx.json()) {
            cl.usage(ctx.out);
            return;
        }
        com.fasterxml.jackson.databind.node.ObjectNode o = ctx.mapper().createObjectNode();
        o.put("command", cl.getCommandSpec().qualifiedName());
        o.put("usage", cl.getUsageMessage(CommandLine.Help.Ansi.OFF));
        ctx.printJson(o);
    }

    /** Creates command objects with the shared context. */
    record Factory(CliContext ctx) implements CommandLine.IFactory {
        @Override
        public <K> K create(Class<K> cls) throws Exception {
            try {
                return cls.getDeclaredConstructor(CliContext.class).newInstance(ctx);
            } catch (NoSuchMethodException e) {
                return CommandLine.defaultFactory().create(cls);
            }
        }
    }

    /** Every command, as {@code @Command(subcommands = ...)} would have built them. */
    static CommandLine full(CommandLine.IFactory factory) {
        return withoutRootInDataDirHelp(build(TREE, factory, null));
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
        return withoutRootInDataDirHelp(build(TREE, factory, named));
    }

    /**
     * Leaves {@code --root} out of the help of the commands that work on the server's data dir
     * (they refuse it, {@link #rootNotForDataDir}), and of their subcommands: it is inherited from
     * {@code agentx}, so picocli lists it for every command. It is still parsed, so that the
     * refusal can say what to set instead.
     */
    private static CommandLine withoutRootInDataDirHelp(CommandLine agentx) {
        agentx.getSubcommands().forEach((name, sub) -> {
            if (DATA_DIR_COMMANDS.contains(name)) {
                hideRoot(sub);
            }
        });
        return agentx;
    }

    private static void hideRoot(CommandLine cl) {
        CommandSpec spec = cl.getCommandSpec();
        CommandLine.Model.OptionSpec root = spec.findOption("--root");
        if (root != null && !root.hidden()) {
            spec.remove(root);
            // local: an inherited option added to a command is added to its subcommands too
            spec.addOption(root.toBuilder().hidden(true).scopeType(CommandLine.ScopeType.LOCAL).build());
        }
        cl.getSubcommands().values().forEach(Commands::hideRoot);
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
