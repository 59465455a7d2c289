package dev.agentx.clarify.cli;

import dev.agentx.clarify.github.gate.PullRequestGate;
import dev.agentx.clarify.github.handlers.IssueMirror;
import dev.agentx.clarify.lock.LockManager;
import dev.agentx.clarify.protocol.ClarifyException;
import dev.agentx.clarify.protocol.ErrorCode;
import dev.agentx.clarify.store.copy.DeliveryTally;
import dev.agentx.clarify.store.copy.Location;
import dev.agentx.clarify.store.copy.StoreCopy;
import dev.agentx.clarify.store.copy.Tally;
import dev.agentx.clarify.store.files.DataDirectory;
import java.util.List;
import java.util.Optional;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code agentx store}: moving GitHub Mode's state between stores. */
@Command(name = "store", mixinStandardHelpOptions = true,
        description = "GitHub Mode's state: copy it between the file store (AGENTX_DATA_DIR) and PostgreSQL.",
        footer = {"", "Examples:",
                "  agentx store copy --from files:/var/lib/agentx --to postgresql://db/agentx",
                "  agentx store copy --from postgresql://db/agentx --to files:/srv/backup"})
final class StoreCommand {
    StoreCommand() {
    }

    @Command(name = "copy", mixinStandardHelpOptions = true,
            description = {"Copy every repository's ledgers, agent statuses and events from one store to another, "
                    + "then count and checksum both sides from what they hold and print them. What each issue "
                    + "shows on GitHub and where the recovery pass stopped go with them, so the server posts "
                    + "nothing again and does not ask GitHub for past deliveries again, and so do the webhook "
                    + "deliveries acknowledged and not done with and the ids of those done with, so none is "
                    + "lost and none is done twice. The destination "
                    + "must hold nothing for the repositories copied. Stop the server (or copy from a backup) "
                    + "first: a delivery handled during the copy may be missed.",
                    "A store is files:DIR (the server's AGENTX_DATA_DIR) or a PostgreSQL URL "
                            + "(postgresql://USER:PASSWORD@HOST:5432/DB, or jdbc:postgresql://...; the password "
                            + "may come from AGENTX_DATABASE_PASSWORD_FILE)."},
            footer = {"", "Examples:",
                    "  agentx store copy --from files:/var/lib/agentx --to postgresql://db/agentx",
                    "  agentx store copy --from files:/var/lib/agentx --to postgresql://db/agentx \\",
                    "      --repo acme/shop"})
    static final class Copy implements Runnable {
        private final CliContext ctx;

        @Option(names = "--from", required = true, paramLabel = "STORE", description = "files:DIR or a PostgreSQL URL.")
        String from;

        @Option(names = "--to", required = true, paramLabel = "STORE", description = "files:DIR or a PostgreSQL URL.")
        String to;

        @Option(names = "--repo", paramLabel = "OWNER/NAME", description = "Copy only this repository.")
        String repo;

        Copy(CliContext ctx) {
            this.ctx = ctx;
        }

        @Override
        public void run() {
            if (repo != null && !DataDirectory.isRepository(repo)) {
                throw new ClarifyException(ErrorCode.USAGE, "--repo " + repo + ": give OWNER/NAME, like acme/shop");
            }
            Location source = location("--from", from);
            Location destination = location("--to", to);
            StoreCopy.Result result = new StoreCopy(LockManager.standard(ctx.clock),
                    IssueMirror::statesIn, PullRequestGate::notePrefixes).copy(source, destination,
                    Optional.ofNullable(repo), () -> {
                        // once the checks have passed: a refused copy prints its refusal alone
                        if (!ctx.json()) {
                            ctx.out.println("Copying " + source + " to " + destination + ":");
                            ctx.out.flush();
                        }
                    }, c -> {
                        if (!ctx.json()) {
                            ctx.out.println(line(c));
                            ctx.out.flush();
                        }
                    });
            List<StoreCopy.Copied> copied = result.repositories();
            if (ctx.json()) {
                var root = ctx.mapper().createObjectNode();
                root.put("from", source.toString());
                root.put("to", destination.toString());
                var arr = root.putArray("repositories");
                for (StoreCopy.Copied c : copied) {
                    var n = arr.addObject();
                    n.put("repo", c.repo());
                    n.set("source", ctx.mapper().valueToTree(c.source()));
                    n.set("destination", ctx.mapper().valueToTree(c.destination()));
                    n.put("same", c.same());
                    n.put("issueStates", c.issueStates());
                    n.put("gateNotes", c.notes().count());
                }
                StoreCopy.Deliveries d = result.deliveries();
                var deliveries = root.putObject("deliveries");
                deliveries.set("source", ctx.mapper().valueToTree(d.source()));
                deliveries.set("destination", ctx.mapper().valueToTree(d.destination()));
                deliveries.put("same", d.same());
                deliveries.put("alreadyThere", d.alreadyThere());
                deliveries.put("left", d.left());
                root.put("recovery", result.recovery().name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'));
                ctx.printJson(root);
                return;
            }
            ctx.out.println(line(result.deliveries()));
            int ledgers = copied.stream().mapToInt(c -> c.destination().ledgers()).sum();
            int events = copied.stream().mapToInt(c -> c.destination().events()).sum();
            ctx.out.println("Copied " + count(copied.size(), "repository", "repositories") + ", "
                    + count(ledgers, "ledger") + " and " + count(events, "event") + "; every count and checksum read back from " + destination + " matches its source; "
                    + result.recovery() + ".");
            ctx.out.flush();
        }

        private static String line(StoreCopy.Copied c) {
            Tally s = c.source();
            Tally d = c.destination();
            return "  " + c.repo() + ": " + count(s.ledgers(), "ledger") + " (" + count(s.records(), "clarification")
                    + "), " + count(s.statuses(), "agent status", "agent statuses") + ", " + count(s.events(), "event")
                    + "; checksum " + s.checksum()
                    + (s.equals(d) ? " = " + d.checksum() + " read back"
                    : " BUT read back: " + count(d.ledgers(), "ledger") + " (" + d.records() + "), "
                    + count(d.statuses(), "status", "statuses") + ", " + count(d.events(), "event") + ", checksum "
                    + d.checksum())
                    + (c.issueStates() == 0 ? "" : "; GitHub state of " + count(c.issueStates(), "issue")
                    + " handed over")
                    + (c.notes().count() == 0 ? "" : "; " + count(c.notes().count(), "note") + " of the merge gate handed "
                    + "over" + (c.notes().same() ? "" : " BUT they do not read back the same"));
        }

        /** The line of the deliveries carried, as the repositories' lines. */
        private static String line(StoreCopy.Deliveries d) {
            DeliveryTally s = d.source();
            return "  deliveries: " + count(s.waiting(), "acknowledged and not done with",
                    "acknowledged and not done with") + ", " + count(s.done(), "id", "ids")
                    + " of deliveries done with; checksum " + s.checksum() + " = " + d.destination().checksum()
                    + " read back" + (d.alreadyThere() == 0 ? "" : "; " + d.alreadyThere() + " received there before, "
                    + "left as they are") + (d.left() == 0 ? "" : "; " + count(d.left(), "delivery", "deliveries")
                    + " of other repositories left for their repository's copy");
        }

        private static String count(long n, String one) {
            return count(n, one, one + "s");
        }

        private static String count(long n, String one, String many) {
            return n + " " + (n == 1 ? one : many);
        }

        private Location location(String option, String text) {
            try {
                return Location.parse(text, ctx.env);
            } catch (IllegalArgumentException e) {
                throw new ClarifyException(ErrorCode.USAGE, option + ": " + e.getMessage());
            }
        }
    }
}
