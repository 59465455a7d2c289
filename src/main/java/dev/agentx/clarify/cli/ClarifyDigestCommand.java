package dev.agentx.clarify.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.agentx.clarify.app.LocalMode;
import dev.agentx.clarify.events.EventType;
import dev.agentx.clarify.monitor.CliDuration;
import dev.agentx.clarify.monitor.Digest;
import dev.agentx.clarify.render.Visible;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.protocol.Ledger;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;
import picocli.CommandLine.Option;

/** {@code agentx clarify digest [--since 7d]}: the metrics of docs/monitor.md, the digest for a period. */
@Command(name = "digest", mixinStandardHelpOptions = true,
        description = "Counts and rates for the clarifications created in a period: total, resolved, escalated, "
                + "abandoned, auto-resolution and escalation rates, average rounds, stale and deadlock counts, "
                + "most common topics.",
        footer = {"", "Examples:", "  agentx clarify digest                 the last 7 days",
                "  agentx clarify digest --since 24h", "  agentx clarify digest --since 2026-02-01 --json"})
final class ClarifyDigestCommand implements Runnable {
    private final CliContext ctx;

    @picocli.CommandLine.Mixin
    ServerStateOptions database;

    @Option(names = "--since", paramLabel = "PERIOD", defaultValue = "7d", converter = SinceConverter.class,
            description = "How far back: 30m, 12h, 7d, 2w, a date (2026-02-01, UTC) or an instant like "
                    + "2026-02-01T09:00:00Z. Default: ${DEFAULT-VALUE}.")
    Since since;

    ClarifyDigestCommand(CliContext ctx) {
        this.ctx = ctx;
    }

    /** The start of the period: a time ago, or a fixed instant. */
    record Since(String text, Duration ago, Instant at) {
        Instant from(Instant now) {
            return at != null ? at : now.minus(ago);
        }
    }

    static final class SinceConverter implements ITypeConverter<Since> {
        static final String FORMS = "a period like 30m, 12h, 7d or 2w, a date like 2026-02-01 (UTC), "
                + "or an instant like 2026-02-01T09:00:00Z";

        @Override
        public Since convert(String value) {
            String v = value.strip();
            try {
                if (v.matches("\\d{4}-\\d{2}-\\d{2}")) {
                    return new Since(v, null, LocalDate.parse(v).atStartOfDay(ZoneOffset.UTC).toInstant());
                }
                if (v.contains("T")) {
                    return new Since(v, null, Instant.parse(v));
                }
                return new Since(v, CliDuration.parse(v), null);
            } catch (DateTimeParseException | IllegalArgumentException e) {
                throw new TypeConversionException("'" + value + "' is not " + FORMS);
            }
        }
    }

    @Override
    public void run() {
        LocalMode local = ctx.local();
        Instant until = ctx.clock.instant().truncatedTo(ChronoUnit.MILLIS);
        Instant from = since.from(until);
        if (from.isAfter(until)) {
            throw new ClarifyException(ErrorCode.USAGE, "--since " + since.text() + " is in the future (it is "
                    + until + " now); give a period like 7d or a date before today.");
        }
        List<Ledger> ledgers = new ArrayList<>();
        List<String> warnings = new ArrayList<>();
        for (int n : local.ledgers().issues()) {
            try {
                local.ledgers().read(n).ifPresent(ledgers::add);
            } catch (ClarifyException e) {
                warnings.add(e.getMessage());
            }
        }
        dev.agentx.clarify.events.EventLog.Read stale = local.eventLog().read(EventType.STALE);
        if (stale.unreadableLines() > 0) {
            warnings.add(stale.unreadableLines() + " line(s) of events.jsonl could not be read and were skipped.");
        }
        Digest.Report r = Digest.compute(ledgers, stale.events(), from, until);
        if (ctx.json()) {
            ObjectNode root = ctx.mapper().valueToTree(r);
            root.put("period", since.text());
            MonitorOutput.warnings(root, warnings);
            ctx.printJson(root);
            return;
        }
        StringBuilder b = new StringBuilder();
        b.append("Clarifications created ").append(from.truncatedTo(ChronoUnit.SECONDS)).append(" to ")
                .append(until.truncatedTo(ChronoUnit.SECONDS)).append(" (")
                .append(since.ago() != null ? "last " + since.text() : "since " + since.text()).append(")\n");
        line(b, "Total", String.valueOf(r.total()));
        line(b, "Resolved", r.resolved() + " (" + r.autoResolved() + " without escalation)");
        line(b, "Escalated", String.valueOf(r.escalated()));
        line(b, "Abandoned", String.valueOf(r.abandoned()));
        line(b, "Still open", String.valueOf(r.open()));
        line(b, "Auto-resolution rate", percent(r.autoResolutionRate()) + "  (target above 80%)");
        line(b, "Escalation rate", percent(r.escalationRate()) + "  (target below 20%)");
        line(b, "Average rounds", r.averageRounds() == null ? "n/a" : String.format(Locale.ROOT, "%.2f",
                r.averageRounds()) + "  (target 2-3)");
        line(b, "Stale", r.staleCount() + "  (target 0)");
        line(b, "Deadlocks", r.deadlockCount() + "  (target 0)");
        line(b, "Most common topics", r.topics().isEmpty() ? "none" : r.topics().stream()
                .map(t -> Visible.text(t.topic()) + " (" + t.count() + ")").collect(Collectors.joining(", ")));
        ctx.out.print(b);
        ctx.out.flush();
        warnings.forEach(w -> ctx.err.println("warning: " + w));
        ctx.err.flush();
    }

    private static void line(StringBuilder b, String label, String value) {
        b.append(String.format(Locale.ROOT, "  %-21s %s\n", label + ":", value));
    }

    private static String percent(Double rate) {
        return rate == null ? "n/a" : String.format(Locale.ROOT, "%.1f%%", rate * 100);
    }
}
