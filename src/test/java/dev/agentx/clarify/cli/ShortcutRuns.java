package dev.agentx.clarify.cli;

import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.support.TestRoot;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import java.util.TreeMap;

/** A command line run in-process with or without the picocli-free shortcuts, for the tests that compare both. */
final class ShortcutRuns {
    private ShortcutRuns() {
    }

    record Result(int code, String out, String err) {
    }

    static Result run(TestRoot r, boolean shortcuts, Map<String, String> env, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CliContext ctx = new CliContext(new PrintWriter(out), new PrintWriter(err), env, r.root, r.clock, false,
                c -> new LocalMode(c.resolvedRoot(), r.clock, r.locks(), new dev.agentx.clarify.channel.HumanChannel()));
        int code = Main.run(args, ctx, shortcuts);
        return new Result(code, out.toString(), err.toString());
    }

    static Result run(TestRoot r, boolean shortcuts, String... args) {
        return run(r, shortcuts, Map.of(), args);
    }

    /** The ledgers, agent statuses and events: what a command may change. */
    static Map<String, String> state(TestRoot r) {
        Map<String, String> all = new TreeMap<>(r.snapshot());
        all.keySet().removeIf(k -> !(k.contains("clarifications/issue-") && k.endsWith(".json"))
                && !k.endsWith("agent-status.json") && !k.endsWith("events.jsonl"));
        return all;
    }
}
