package dev.agentx.clarify.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.ledger.ActiveLedgers;
import dev.agentx.clarify.protocol.ClarificationId;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.render.CliRenderer;
import dev.agentx.clarify.routing.ClarificationEngine;
import dev.agentx.clarify.routing.ClarifyCommand;
import dev.agentx.clarify.routing.OpenQuestions;
import dev.agentx.clarify.routing.Outcome;
import dev.agentx.clarify.routing.Validation;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code agentx clarify ...}: list, show and drive clarifications (docs/cli.md). */
@Command(name = "clarify", mixinStandardHelpOptions = true,
        description = "List active clarifications, or show one issue's threads with --issue.",
        footer = {"", "Examples:",
                "  agentx clarify                      all active clarifications",
                "  agentx clarify list                 the same",
                "  agentx clarify --issue 42           issue 42's threads, oldest first",
                "  agentx clarify show CLR-42-001",
                "  agentx clarify ask --issue 42 --from engineer --to architect \"Which auth?\"",
                "  agentx clarify stale                stale, stuck and deadlocked ones",
                "  agentx clarify digest --since 7d    counts and rates"})
public final class ClarifyCommands implements Runnable {
    private final CliContext ctx;

    @picocli.CommandLine.Mixin
    ServerStateOptions database;

    @Option(names = "--issue", paramLabel = "N", description = "Show this issue's threads, oldest first.")
    Integer issue;

    public ClarifyCommands(CliContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void run() {
        list(ctx, issue);
    }

    /** {@code agentx clarify list}: the same as {@code agentx clarify}, under the name people type to list. */
    @Command(name = "list", mixinStandardHelpOptions = true,
            description = "List active clarifications (the same as 'agentx clarify'), or one issue's threads.",
            footer = {"", "Examples:", "  agentx clarify list", "  agentx clarify list --issue 42 --json"})
    public static final class ListActive implements Runnable {
        private final CliContext ctx;

        @picocli.CommandLine.Mixin
        ServerStateOptions database;

        @Option(names = "--issue", paramLabel = "N", description = "Show this issue's threads, oldest first.")
        Integer issue;

        public ListActive(CliContext ctx) {
            this.ctx = ctx;
        }

        @Override
        public void run() {
            list(ctx, issue);
        }
    }

    /** The active clarifications of every issue, or with {@code issue} that issue's threads. */
    static void list(CliContext ctx, Integer issue) {
        ctx.noteIfNoProject();
        LocalMode local = ctx.local();
        if (issue != null) {
            if (issue < 1) {
                throw new ClarifyException(ErrorCode.VALIDATION, "--issue must be a positive issue number, got " + issue + ".");
            }
            Ledger ledger = local.ledgers().read(issue).orElse(Ledger.empty(issue));
            if (ctx.json()) {
                ctx.printJson(ledger);
                return;
            }
            if (ledger.clarifications().isEmpty()) {
                ctx.out.println("No clarifications on issue #" + issue + ".");
            } else {
                CliRenderer r = new CliRenderer(ctx.ansi());
                StringBuilder b = new StringBuilder();
                for (ClarificationRecord rec : ledger.clarifications()) {
                    if (b.length() > 0) {
                        b.append('\n');
                    }
                    b.append(r.record(rec));
                }
                ctx.out.print(b);
            }
            ctx.out.flush();
            return;
        }
        // Through the active-ledger index: closed ledgers are not read, and the monitor pass that
        // follows works on this same scan. A damaged ledger hides nothing else: the others are
        // listed, and it is named with what to do.
        ActiveLedgers.Scan scan = ctx.scan();
        List<String> warnings = scan.problems().stream().map(p -> ErrorCode.LEDGER_DAMAGED.name() + ": " + p).toList();
        List<CliRenderer.Row> rows = new ArrayList<>();
        for (Ledger l : scan.active()) {
            for (ClarificationRecord rec : l.active()) {
                rows.add(new CliRenderer.Row(l.issueNumber(), rec));
            }
        }
        if (ctx.json()) {
            ObjectNode root = ctx.mapper().createObjectNode();
            ArrayNode arr = root.putArray("clarifications");
            rows.forEach(row -> arr.add(Json.record(ctx, row.issue(), row.record())));
            MonitorOutput.warnings(root, warnings);
            ctx.printJson(root);
            return;
        }
        ctx.out.print(new CliRenderer(ctx.ansi()).table(rows, ctx.clock.instant(), ctx.width()));
        ctx.out.flush();
        warnings.forEach(w -> ctx.err.println("warning: " + w));
        ctx.err.flush();
    }

    /** Prints the outcome of a command: JSON, or one line and its notes. */
    static void report(CliContext ctx, Outcome o, String line) {
        if (ctx.json()) {
            ObjectNode root = ctx.mapper().createObjectNode();
            root.put("id", o.record().id());
            root.put("issueNumber", o.issue());
            root.put("status", o.record().status().wire());
            root.put("round", o.record().round());
            root.put("blocking", o.record().blocking());
            ArrayNode notes = root.putArray("notes");
            o.notes().forEach(notes::add);
            root.set("clarification", Json.record(ctx, o.issue(), o.record()));
            ctx.printJson(root);
            return;
        }
        ctx.out.println(line);
        ctx.out.flush();
        for (String n : o.notes()) {
            ctx.err.println("note: " + n);
        }
        ctx.err.flush();
    }

    /** A text argument; "-" reads it from standard input (for multi-line text). */
    static String text(CliContext ctx, List<String> words) {
        if (words == null || words.isEmpty()) {
            return "";
        }
        if (words.size() == 1 && words.get(0).equals("-")) {
            try {
                return new String(ctx.stdin.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return String.join(" ", words);
    }

    static String id(String text) {
        return ClarificationId.parse(text).toString();
    }

    @Command(name = "show", mixinStandardHelpOptions = true, description = "Show one record with its thread.",
            footer = {"", "Example:", "  agentx clarify show CLR-42-001"})
    static final class Show implements Runnable {
        private final CliContext ctx;

        @picocli.CommandLine.Mixin
        ServerStateOptions database;

        @Parameters(index = "0", paramLabel = "CLR-N-NNN", description = "The clarification id.")
        String id;

        Show(CliContext ctx) {
            this.ctx = ctx;
        }

        @Override
        public void run() {
            ClarificationId cid = ClarificationId.parse(id);
            ClarificationRecord rec = ctx.local().ledgers().read(cid.issue()).flatMap(l -> l.find(cid.toString()))
                    .orElseThrow(() -> new ClarifyException(ErrorCode.NOT_FOUND, "Clarification " + cid
                            + " not found in ledger. List the issue's records with 'agentx clarify --issue "
                            + cid.issue() + "'."));
            if (ctx.json()) {
                ctx.printJson(Json.record(ctx, cid.issue(), rec));
            } else {
                ctx.out.print(new CliRenderer(ctx.ansi()).record(rec));
                ctx.out.flush();
            }
        }
    }

    @Command(name = "ask", mixinStandardHelpOptions = true,
            description = "Ask a question: the hub checks scope, records it and routes it to the target. Prints the new id.",
            footer = {"", "Examples:",
                    "  agentx clarify ask --issue 42 --from engineer --to architect \\",
                    "      --topic \"Auth\" \"JWT or sessions?\"",
                    "  agentx clarify ask --issue 7 --from engineer --to pm --non-blocking \\",
                    "      --option Yes --option No \"Ship dark mode?\"",
                    "  # the question from stdin:",
                    "  id=$(agentx clarify ask --issue 42 --from engineer --to architect -)"})
    static final class Ask implements Runnable {
        private final CliContext ctx;

        @Option(names = "--issue", required = true, paramLabel = "N", description = "Issue number.")
        int issue;
        @Option(names = "--from", required = true, paramLabel = "AGENT", description = "Requesting agent (role).")
        String from;
        @Option(names = "--to", required = true, paramLabel = "AGENT", description = "Target agent (role).")
        String to;
        @Option(names = "--topic", paramLabel = "T", description = "Short subject, 1-200 chars (default: the question's first line).")
        String topic;
        @Option(names = "--non-blocking", description = "The requester keeps working meanwhile.")
        boolean nonBlocking;
        @Option(names = "--option", paramLabel = "X", description = "A choice for the answer; repeat for several.")
        List<String> options = new ArrayList<>();
        @Option(names = "--workflow", paramLabel = "W", description = "The issue's workflow (default: config default_workflow, else feature).")
        String workflow;
        @Parameters(paramLabel = "QUESTION", arity = "1..*", description = "The question, 1-2000 chars; '-' reads stdin.")
        List<String> question;

        Ask(CliContext ctx) {
            this.ctx = ctx;
        }

        @Override
        public void run() {
            Outcome o = ctx.local().engine().execute(new ClarifyCommand.Ask(issue, from, to, topic, text(ctx, question),
                    !nonBlocking, options, workflow));
            report(ctx, o, o.record().id());
        }
    }

    @Command(name = "answer", mixinStandardHelpOptions = true, description = "Answer the open round of a clarification.",
            footer = {"", "Example:", "  agentx clarify answer CLR-42-001 --from architect \"JWT; see ADR-42.\""})
    static final class Answer implements Runnable {
        private final CliContext ctx;

        @Parameters(index = "0", paramLabel = "CLR-N-NNN")
        String id;
        @Option(names = "--from", paramLabel = "AGENT", description = "Who answers; must be the record's target (default: the target).")
        String from;
        @Option(names = "--choice", paramLabel = "N", description = "The option the answer picks, 1 for the first "
                + "(default: the option the answer's text names, as '2' or the option's text).")
        Integer choice;
        @Parameters(index = "1..*", arity = "1..*", paramLabel = "ANSWER", description = "The answer, 1-2000 chars; '-' reads stdin.")
        List<String> answer;

        Answer(CliContext ctx) {
            this.ctx = ctx;
        }

        @Override
        public void run() {
            Outcome o = ctx.local().engine().execute(new ClarifyCommand.Answer(id(id), from, text(ctx, answer),
                    Validation.choice("--choice", choice)));
            report(ctx, o, o.record().id() + " answered (round " + o.record().round() + " of " + o.record().maxRounds() + ")");
        }
    }

    @Command(name = "followup", mixinStandardHelpOptions = true,
            description = "Ask the next round. Past the round limit it is refused (MAX_ROUNDS_EXCEEDED) and escalated.",
            footer = {"", "Example:", "  agentx clarify followup CLR-42-001 \"And for service-to-service calls?\""})
    static final class FollowUp implements Runnable {
        private final CliContext ctx;

        @Parameters(index = "0", paramLabel = "CLR-N-NNN")
        String id;
        @Parameters(index = "1..*", arity = "1..*", paramLabel = "QUESTION", description = "The question, 1-2000 chars; '-' reads stdin.")
        List<String> question;

        FollowUp(CliContext ctx) {
            this.ctx = ctx;
        }

        @Override
        public void run() {
            try {
                Outcome o = ctx.local().engine().execute(new ClarifyCommand.FollowUp(id(id), null, text(ctx, question)));
                report(ctx, o, o.record().id() + " round " + o.record().round() + " asked; "
                        + (o.record().status().awaitingAnswer() ? "waiting for " + o.record().to() : o.record().status().wire()));
            } catch (ClarificationEngine.RoundLimitException e) {
                if (!ctx.json()) {
                    ctx.out.print(new CliRenderer(ctx.ansi()).entry(e.outcome().record(),
                            e.outcome().record().thread().get(e.outcome().record().thread().size() - 1)));
                    ctx.out.flush();
                }
                throw e;
            }
        }
    }

    @Command(name = "resolve", mixinStandardHelpOptions = true,
            description = "Close a clarification as resolved (the requester; escalated ones: a human).",
            footer = {"", "Example:", "  agentx clarify resolve CLR-42-001 -m \"Use JWT with 15 min expiry.\""})
    static final class Resolve implements Runnable {
        private final CliContext ctx;

        @Parameters(index = "0", paramLabel = "CLR-N-NNN")
        String id;
        @Option(names = {"-m", "--message"}, paramLabel = "NOTE", description = "Resolution note or decision.")
        String note;
        @Option(names = "--by", paramLabel = "NAME", description = "Who resolves (default: the requester; 'human' for escalated ones).")
        String by;

        Resolve(CliContext ctx) {
            this.ctx = ctx;
        }

        @Override
        public void run() {
            Outcome o = ctx.local().engine().execute(new ClarifyCommand.Resolve(id(id), by, note));
            report(ctx, o, o.record().id() + " resolved");
        }
    }

    @Command(name = "escalate", mixinStandardHelpOptions = true, description = "Hand a clarification to a human.",
            footer = {"", "Example:", "  agentx clarify escalate CLR-42-001 -m \"Needs a product decision\""})
    static final class Escalate implements Runnable {
        private final CliContext ctx;

        @Parameters(index = "0", paramLabel = "CLR-N-NNN")
        String id;
        @Option(names = {"-m", "--message"}, paramLabel = "REASON", description = "Why it needs a human.")
        String reason;
        @Option(names = "--by", paramLabel = "NAME", description = "Who escalates (default: human).")
        String by;

        Escalate(CliContext ctx) {
            this.ctx = ctx;
        }

        @Override
        public void run() {
            Outcome o = ctx.local().engine().execute(new ClarifyCommand.Escalate(id(id), by, reason));
            if (!ctx.json()) {
                ClarificationRecord r = o.record();
                ctx.out.print(new CliRenderer(ctx.ansi()).entry(r, r.thread().get(r.thread().size() - 1)));
            }
            report(ctx, o, o.record().id() + " escalated");
        }
    }

    @Command(name = "abandon", mixinStandardHelpOptions = true, description = "Close a clarification without an answer.",
            footer = {"", "Example:", "  agentx clarify abandon CLR-42-001 -m \"Requirement dropped\""})
    static final class Abandon implements Runnable {
        private final CliContext ctx;

        @Parameters(index = "0", paramLabel = "CLR-N-NNN")
        String id;
        @Option(names = {"-m", "--message"}, paramLabel = "REASON", description = "Why it is abandoned.")
        String reason;
        @Option(names = "--by", paramLabel = "NAME", description = "Who abandons (default: human).")
        String by;

        Abandon(CliContext ctx) {
            this.ctx = ctx;
        }

        @Override
        public void run() {
            Outcome o = ctx.local().engine().execute(new ClarifyCommand.Abandon(id(id), by, reason));
            report(ctx, o, o.record().id() + " abandoned");
        }
    }

    @Command(name = "accept", mixinStandardHelpOptions = true,
            description = "Accept an agent's proposed answer (autonomy \"approve\"), so that it counts as the round's answer.",
            footer = {"", "Example:", "  agentx clarify accept CLR-42-001 --by alice"})
    static final class Accept implements Runnable {
        private final CliContext ctx;

        @Parameters(index = "0", paramLabel = "CLR-N-NNN")
        String id;
        @Option(names = "--by", paramLabel = "NAME", description = "Who accepts (default: human).")
        String by;

        Accept(CliContext ctx) {
            this.ctx = ctx;
        }

        @Override
        public void run() {
            Outcome o = ctx.local().engine().execute(new ClarifyCommand.Accept(id(id), by));
            report(ctx, o, o.record().id() + " accepted: " + o.record().to() + "'s answer to round "
                    + o.record().round() + " counts");
        }
    }

    @Command(name = "ingest", mixinStandardHelpOptions = true,
            description = {"Open one clarification per open question in an agent's output: a JSON object with "
                    + "\"open_questions\" or \"openQuestions\", each {id?, text, createdAt?}.",
                    "A question already opened on the issue by the same agent from the same id is skipped, so "
                    + "ingesting the same output again changes nothing."},
            footer = {"", "Examples:",
                    "  agentx clarify ingest --issue 42 --from engineer --to architect out.json",
                    "  my-agent | agentx clarify ingest --issue 42 --from engineer --to pm \\",
                    "      --non-blocking -"})
    static final class Ingest implements Runnable {
        private final CliContext ctx;

        @Option(names = "--issue", required = true, paramLabel = "N", description = "Issue number.")
        int issue;
        @Option(names = "--from", required = true, paramLabel = "AGENT", description = "The agent whose output it is (the requester).")
        String from;
        @Option(names = "--to", required = true, paramLabel = "AGENT", description = "Who is asked (the target).")
        String to;
        @Option(names = "--non-blocking", description = "The requester keeps working meanwhile.")
        boolean nonBlocking;
        @Option(names = "--workflow", paramLabel = "W", description = "The issue's workflow (default: config default_workflow, else feature).")
        String workflow;
        @Parameters(index = "0", paramLabel = "FILE", description = "The agent's output (JSON); '-' reads stdin.")
        String file;

        Ingest(CliContext ctx) {
            this.ctx = ctx;
        }

        @Override
        public void run() {
            String source = file.equals("-") ? "standard input" : file;
            List<OpenQuestions.OpenQuestion> questions = OpenQuestions.parse(source, read());
            for (OpenQuestions.OpenQuestion q : questions) {
                try {
                    Validation.text("question", q.text());
                } catch (ClarifyException e) {
                    throw new ClarifyException(e.code(), source + ", open question '" + q.id() + "': " + e.getMessage());
                }
            }
            ObjectNode root = ctx.mapper().createObjectNode();
            root.put("issueNumber", issue);
            ArrayNode list = root.putArray("clarifications");
            if (questions.isEmpty() && !ctx.json()) {
                ctx.out.println("No open questions in " + source + ".");
            }
            for (OpenQuestions.OpenQuestion q : questions) {
                Outcome o = ctx.local().engine().execute(new ClarifyCommand.Ask(issue, from, to, null, q.text(),
                        !nonBlocking, List.of(), workflow, q.id()));
                boolean skipped = o.events().isEmpty();
                if (ctx.json()) {
                    ObjectNode item = list.addObject();
                    item.put("openQuestionId", q.id());
                    item.put("id", o.record().id());
                    item.put("skipped", skipped);
                    item.put("status", o.record().status().wire());
                    ArrayNode notes = item.putArray("notes");
                    o.notes().forEach(notes::add);
                } else {
                    ctx.out.println(o.record().id() + (skipped ? " skipped: " : " opened: ") + "open question " + q.id());
                    ctx.out.flush();
                    for (String n : o.notes()) {
                        ctx.err.println("note: " + n);
                    }
                    ctx.err.flush();
                }
            }
            if (ctx.json()) {
                ctx.printJson(root);
            }
        }

        private String read() {
            try {
                return file.equals("-") ? new String(ctx.stdin.readAllBytes(), StandardCharsets.UTF_8)
                        : Files.readString(ctx.cwd.resolve(file), StandardCharsets.UTF_8);
            } catch (NoSuchFileException e) {
                throw new ClarifyException(ErrorCode.VALIDATION, "No such file: " + file + ".");
            } catch (IOException e) {
                throw new ClarifyException(ErrorCode.VALIDATION, "Cannot read " + file + ": " + e.getMessage(), e);
            }
        }
    }
}
