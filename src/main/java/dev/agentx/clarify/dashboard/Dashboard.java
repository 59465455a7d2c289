package dev.agentx.clarify.dashboard;

import dev.agentx.clarify.events.ClarificationEvent;
import dev.agentx.clarify.monitor.AgentOverview;
import dev.agentx.clarify.monitor.Deadlock;
import dev.agentx.clarify.monitor.Detector;
import dev.agentx.clarify.monitor.Digest;
import dev.agentx.clarify.monitor.Findings;
import dev.agentx.clarify.monitor.UpstreamOrder;
import dev.agentx.clarify.monitor.WaitEdge;
import dev.agentx.clarify.protocol.ClarificationRecord;
import dev.agentx.clarify.protocol.EntryType;
import dev.agentx.clarify.protocol.Ledger;
import dev.agentx.clarify.protocol.Status;
import dev.agentx.clarify.protocol.ThreadEntry;
import dev.agentx.clarify.render.CliRenderer;
import dev.agentx.clarify.status.AgentStatus;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * What the dashboard shows, computed from the state as values: agents and what each waits on,
 * the wait-for graph laid out for drawing with its deadlocks, open threads, escalations and the
 * digest as chart data. No I/O and no web types: the server renders it with the templates.
 * Nothing here changes state: deadlocks are found as the monitor finds them, not broken.
 */
public final class Dashboard {
    /** Days the request chart covers, ending today (UTC). */
    public static final int DAYS = 14;
    private static final double WIDTH = 560;
    private static final double HEIGHT = 360;

    private Dashboard() {
    }

    /**
     * A new snapshot of one project per call: its statuses, every ledger (a damaged one becomes a
     * warning), the active ones and the stale events.
     */
    public static Supplier<Snapshot> of(String title, java.time.Clock clock, dev.agentx.clarify.ledger.LedgerStore ledgers,
                                        dev.agentx.clarify.ledger.ActiveLedgers activeLedgers,
                                        dev.agentx.clarify.status.AgentStatusStore statuses,
                                        dev.agentx.clarify.events.EventLog events, Supplier<UpstreamOrder> order) {
        return () -> {
            dev.agentx.clarify.ledger.ActiveLedgers.Scan scan = activeLedgers.scan();
            List<String> warnings = new ArrayList<>(scan.problems());
            List<Ledger> all = new ArrayList<>();
            for (int issue : ledgers.issues()) {
                try {
                    ledgers.read(issue).ifPresent(all::add);
                } catch (dev.agentx.clarify.protocol.ClarifyException e) {
                    if (scan.problems().stream().noneMatch(p -> p.contains("issue-" + issue + ".json"))) {
                        warnings.add(e.getMessage());
                    }
                }
            }
            return build(title, clock.instant(), statuses.read(), all, scan.active(),
                    events.read(dev.agentx.clarify.events.EventType.STALE).events(), order, warnings);
        };
    }

    /** Everything on the page at one moment. */
    /**
     * @param base     the path the page's own links start with ("" in Local Mode, the repository's
     *                 {@code /dashboard/owner/repo} on the server)
     * @param issueUrl the address of an issue without its number (on GitHub), or "" for none
     * @param command  how a person runs a command: {@code agentx clarify} locally, a comment on GitHub
     */
    public record Snapshot(String title, Instant at, List<AgentView> agents, Graph graph, List<ThreadView> open,
                           List<EscalationView> escalations, DigestView digest, List<String> warnings, String base,
                           String issueUrl) {
        /**
         * The same snapshot served under {@code base} on the server, with issues linked to
         * {@code issueUrl}; an escalation is resolved there by a comment on its issue.
         */
        public Snapshot onGitHub(String newBase, String newIssueUrl, CommentOf commentOf) {
            List<EscalationView> onIssues = escalations.stream().map(e -> new EscalationView(e.id(), e.issue(),
                    e.topic(), e.summary(), "/clarify resolve " + e.id() + " <decision>")).toList();
            List<ThreadView> linked = new ArrayList<>();
            for (ThreadView t : open) {
                List<EntryView> entries = new ArrayList<>();
                for (int i = 0; i < t.entries().size(); i++) {
                    EntryView e = t.entries().get(i);
                    Long comment = commentOf.id(t.issue(), t.id(), i);
                    entries.add(new EntryView(e.kind(), e.round(), e.from(), e.body(), e.at(), e.choice(),
                            comment == null ? "" : newIssueUrl + t.issue() + "#issuecomment-" + comment));
                }
                linked.add(new ThreadView(t.id(), t.issue(), t.from(), t.to(), t.topic(), t.status(), t.round(),
                        t.maxRounds(), t.blocking(), t.age(), t.slaLeft(), t.overdue(), t.options(), t.code(),
                        entries));
            }
            return new Snapshot(title, at, agents, graph, linked, onIssues, digest, warnings, newBase, newIssueUrl);
        }
    }

    /** The id of the comment on GitHub of a record's thread entry (by its index), or null. */
    @FunctionalInterface
    public interface CommentOf {
        Long id(int issue, String recordId, int index);
    }

    /** An agent: its status, what it waits on and answers, and whether it is in a deadlock. */
    public record AgentView(String name, String state, String issue, String lastActivity, List<String> waits,
                            List<String> answers, boolean deadlocked) {
    }

    /** The wait-for graph: agents as nodes on a circle, blocking questions as edges. */
    public record Graph(double width, double height, List<Node> nodes, List<Edge> edges, List<Cycle> cycles) {
    }

    /** A node; its name is written at {@code labelY}, outside the circle and away from the middle. */
    public record Node(String name, double x, double y, double labelY, boolean inCycle) {
    }

    /** An edge from the asking agent to the one it waits on; the line ends short of the target's circle. */
    public record Edge(String from, String to, String id, int issue, double x1, double y1, double x2, double y2,
                       boolean inCycle) {
    }

    /** A deadlock: the cycle, named, and the request the monitor escalates to break it. */
    public record Cycle(String path, List<String> ids, String victim, String why) {
    }

    /** An open clarification and its whole thread; {@code code}: the line of code it was asked on, or "". */
    public record ThreadView(String id, int issue, String from, String to, String topic, String status, int round,
                             int maxRounds, boolean blocking, String age, String slaLeft, boolean overdue,
                             List<String> options, String code, List<EntryView> entries) {
    }

    /** A thread entry; {@code link}: its comment on GitHub, or "" where there is none (Local Mode). */
    public record EntryView(String kind, int round, String from, String body, String at, String choice, String link) {
    }

    /** An escalation waiting for a person, with the command that settles it. */
    public record EscalationView(String id, int issue, String topic, String summary, String command) {
    }

    /** The digest as chart data: requests per day, rounds used, rates and top topics. */
    public record DigestView(int total, int resolved, int autoResolved, int escalated, int open, String autoRate,
                             String escalationRate, String averageRounds, List<Bar> perDay, List<Bar> autoPerDay,
                             List<Bar> rounds, List<Bar> topics) {
    }

    /** One bar of a chart: its label, value and height as a share of the chart's largest (0 to 100). */
    public record Bar(String label, int value, int percent) {
    }

    /**
     * @param all    every ledger (the digest counts closed records too)
     * @param active the ledgers with active records
     * @param stale  the log's stale events (for the digest)
     */
    public static Snapshot build(String title, Instant now, Map<String, AgentStatus> statuses, List<Ledger> all,
                                 List<Ledger> active, List<ClarificationEvent> stale, Supplier<UpstreamOrder> order,
                                 List<String> warnings) {
        List<String> problems = new ArrayList<>(warnings);
        Findings findings = Detector.detect(active, now, order, problems);
        Set<String> deadlockedIds = new LinkedHashSet<>();
        Set<String> deadlockedAgents = new LinkedHashSet<>();
        List<Cycle> cycles = new ArrayList<>();
        for (Deadlock d : findings.deadlocks()) {
            deadlockedIds.addAll(d.ids());
            d.cycle().forEach(e -> deadlockedAgents.add(e.from()));
            cycles.add(new Cycle(d.path(), d.ids(), d.victim().id(), d.why()));
        }
        List<AgentView> agents = new ArrayList<>();
        for (AgentOverview.Agent a : AgentOverview.of(statuses, active)) {
            AgentStatus s = a.status();
            List<String> waits = a.waitingFor().stream().map(in -> in.waitsOn() + " for " + in.record().id()
                    + " (#" + in.issue() + (in.record().blocking() ? "" : ", non-blocking") + ")").toList();
            List<String> answers = a.answering().stream().map(in -> in.record().id() + " from " + in.record().from()
                    + " (#" + in.issue() + ")").toList();
            agents.add(new AgentView(a.name(), s == null ? "-" : s.status().wire(),
                    s == null || s.issue() == null ? "" : "#" + s.issue(),
                    s == null || s.lastActivity() == null ? "" : age(s.lastActivity(), now) + " ago", waits, answers,
                    deadlockedAgents.contains(a.name())));
        }
        List<ThreadView> open = new ArrayList<>();
        List<EscalationView> escalations = new ArrayList<>();
        for (Ledger l : active) {
            for (ClarificationRecord r : l.active()) {
                if (r.status() == Status.ESCALATED) {
                    ThreadEntry last = lastOf(r, EntryType.ESCALATION);
                    escalations.add(new EscalationView(r.id(), l.issueNumber(), r.topic(),
                            last == null ? "" : last.body(), "agentx clarify resolve " + r.id() + " -m \"<decision>\""));
                }
                open.add(thread(l.issueNumber(), r, now));
            }
        }
        open.sort(Comparator.comparingInt(ThreadView::issue).thenComparing(ThreadView::id));
        Graph g = graph(active, deadlockedIds);
        return new Snapshot(title, now, agents, new Graph(g.width(), g.height(), g.nodes(), g.edges(), cycles), open,
                escalations, digest(all, stale, now), problems, "", "");
    }

    private static ThreadView thread(int issue, ClarificationRecord r, Instant now) {
        Duration left = Duration.between(now, r.staleAfter());
        boolean waiting = r.status().awaitingAnswer();
        String sla = !waiting ? "" : left.isNegative() ? "overdue " + CliRenderer.age(left.negated())
                : CliRenderer.age(left) + " left";
        List<EntryView> entries = new ArrayList<>();
        for (ThreadEntry e : r.thread()) {
            String choice = e.choice() != null && e.choice() < r.options().size()
                    ? (e.choice() + 1) + ") " + r.options().get(e.choice()) : "";
            String kind = e.isProposal() ? "proposal" : e.type().wire();
            entries.add(new EntryView(kind, e.round(), e.from(), e.body(), seconds(e.timestamp()), choice, ""));
        }
        return new ThreadView(r.id(), issue, r.from(), r.to(), r.topic(), r.status().wire(), r.round(), r.maxRounds(),
                r.blocking(), age(r.created(), now), sla, waiting && left.isNegative(), r.options(),
                r.codeLine() == null ? "" : r.codeLine().describe(), entries);
    }

    private static ThreadEntry lastOf(ClarificationRecord r, EntryType type) {
        ThreadEntry found = null;
        for (ThreadEntry e : r.thread()) {
            if (e.type() == type) {
                found = e;
            }
        }
        return found;
    }

    /** Agents on a circle (in name order), an edge per blocking question that waits. */
    static Graph graph(List<Ledger> active, Set<String> deadlockedIds) {
        List<WaitEdge> waits = new ArrayList<>();
        Set<String> names = new java.util.TreeSet<>();
        for (Ledger l : active) {
            for (ClarificationRecord r : l.active()) {
                if (WaitEdge.waits(r)) {
                    waits.add(new WaitEdge(l.issueNumber(), r));
                    names.add(r.from());
                    names.add(r.to());
                }
            }
        }
        List<String> order = new ArrayList<>(names);
        Map<String, double[]> at = new TreeMap<>();
        List<Node> nodes = new ArrayList<>();
        double cx = WIDTH / 2;
        double cy = HEIGHT / 2;
        double radius = order.size() == 1 ? 0 : Math.min(WIDTH, HEIGHT) / 2 - 70;
        Set<String> inCycle = new LinkedHashSet<>();
        for (WaitEdge e : waits) {
            if (deadlockedIds.contains(e.id())) {
                inCycle.add(e.from());
                inCycle.add(e.to());
            }
        }
        for (int i = 0; i < order.size(); i++) {
            double angle = -Math.PI / 2 + 2 * Math.PI * i / order.size();
            double x = round(cx + radius * Math.cos(angle));
            double y = round(cy + radius * Math.sin(angle));
            at.put(order.get(i), new double[] {x, y});
            nodes.add(new Node(order.get(i), x, y, y < cy ? y - 36 : y + 46, inCycle.contains(order.get(i))));
        }
        List<Edge> edges = new ArrayList<>();
        double r = 34; // the node circle's radius, plus room for the arrow head
        for (WaitEdge e : waits) {
            double[] a = at.get(e.from());
            double[] b = at.get(e.to());
            double dx = b[0] - a[0];
            double dy = b[1] - a[1];
            double len = Math.max(1, Math.hypot(dx, dy));
            // two questions between the same pair in opposite directions: draw them side by side
            double nx = -dy / len * 6;
            double ny = dx / len * 6;
            edges.add(new Edge(e.from(), e.to(), e.id(), e.issue(),
                    round(a[0] + dx / len * r + nx), round(a[1] + dy / len * r + ny),
                    round(b[0] - dx / len * (r + 6) + nx), round(b[1] - dy / len * (r + 6) + ny),
                    deadlockedIds.contains(e.id())));
        }
        return new Graph(WIDTH, HEIGHT, nodes, edges, List.of());
    }

    /** An instant to the second, as people read it: 2026-03-01T09:00:05Z. */
    public static String seconds(Instant t) {
        return t.truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();
    }

    private static double round(double v) {
        return Math.round(v * 10) / 10.0;
    }

    static DigestView digest(List<Ledger> all, List<ClarificationEvent> stale, Instant now) {
        Digest.Report total = Digest.compute(all, stale, Instant.EPOCH, now);
        LocalDate today = LocalDate.ofInstant(now, ZoneOffset.UTC);
        List<int[]> days = new ArrayList<>();
        List<String> labels = new ArrayList<>();
        for (int i = DAYS - 1; i >= 0; i--) {
            LocalDate d = today.minusDays(i);
            Instant from = d.atStartOfDay().toInstant(ZoneOffset.UTC);
            Instant until = d.plusDays(1).atStartOfDay().toInstant(ZoneOffset.UTC).minusNanos(1);
            Digest.Report r = Digest.compute(all, stale, from, until);
            days.add(new int[] {r.total(), r.autoResolved()});
            labels.add(d.toString().substring(5));
        }
        int maxDay = days.stream().mapToInt(x -> x[0]).max().orElse(0);
        List<Bar> perDay = new ArrayList<>();
        List<Bar> autoPerDay = new ArrayList<>();
        for (int i = 0; i < days.size(); i++) {
            perDay.add(new Bar(labels.get(i), days.get(i)[0], percent(days.get(i)[0], maxDay)));
            autoPerDay.add(new Bar(labels.get(i), days.get(i)[1], percent(days.get(i)[1], maxDay)));
        }
        Map<Integer, Integer> rounds = new TreeMap<>();
        for (Ledger l : all) {
            for (ClarificationRecord r : l.clarifications()) {
                rounds.merge(r.round(), 1, Integer::sum);
            }
        }
        int maxRounds = rounds.values().stream().mapToInt(Integer::intValue).max().orElse(0);
        List<Bar> roundBars = new ArrayList<>();
        rounds.forEach((k, v) -> roundBars.add(new Bar(k + (k == 1 ? " round" : " rounds"), v, percent(v, maxRounds))));
        int maxTopic = total.topics().stream().mapToInt(Digest.TopicCount::count).max().orElse(0);
        List<Bar> topics = total.topics().stream().map(t -> new Bar(t.topic(), t.count(), percent(t.count(), maxTopic)))
                .toList();
        return new DigestView(total.total(), total.resolved(), total.autoResolved(), total.escalated(), total.open(),
                rate(total.autoResolutionRate()), rate(total.escalationRate()),
                total.averageRounds() == null ? "-" : String.format(Locale.ROOT, "%.1f", total.averageRounds()),
                perDay, autoPerDay, roundBars, topics);
    }

    private static int percent(int v, int max) {
        return max == 0 ? 0 : (int) Math.round(100.0 * v / max);
    }

    private static String rate(Double r) {
        return r == null ? "-" : String.format(Locale.ROOT, "%.0f %%", r * 100);
    }

    private static String age(Instant since, Instant now) {
        Duration d = Duration.between(since, now);
        return CliRenderer.age(d.isNegative() ? Duration.ZERO : d);
    }
}
