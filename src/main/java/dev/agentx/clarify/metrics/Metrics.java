package dev.agentx.clarify.metrics;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.function.Supplier;

/**
 * A small metrics registry written out in the Prometheus text exposition format (version 0.0.4).
 * Counters and summaries (count and sum, in seconds) are updated as things happen; gauges are
 * computed by their supplier at scrape time. One registry is created by the composition root and
 * injected; nothing here is static.
 *
 * <p>Hand-written instead of Micrometer's Prometheus registry: that registry brings micrometer-core,
 * HdrHistogram, LatencyUtils and five io.prometheus metrics jars into the shaded jar (and its
 * start-up), for the dozen counters, summaries and gauges named here.
 */
public final class Metrics {
    /** The kinds of metric, as written in {@code # TYPE}. */
    public enum Type {
        COUNTER, GAUGE, SUMMARY
    }

    /** One labelled value of a gauge; labels are name, value pairs. */
    public record Sample(double value, String... labels) {
    }

    private record Family(String name, Type type, String help, Map<List<String>, DoubleAdder[]> series,
                          Supplier<List<Sample>> gauge) {
    }

    private final Map<String, Family> families = new ConcurrentSkipListMap<>();

    private static void checkName(String name) {
        if (!name.matches("agentx_[a-z0-9_]+")) {
            throw new IllegalArgumentException("metric names start with agentx_ and use [a-z0-9_]: '" + name + "'");
        }
    }

    /** Declares a counter or summary, so it is written (with HELP and TYPE) before it has a value. */
    public Metrics declare(String name, Type type, String help) {
        checkName(name);
        if (type == Type.GAUGE) {
            throw new IllegalArgumentException(name + ": a gauge is declared with gauge(name, help, supplier)");
        }
        Family f = families.computeIfAbsent(name, n -> new Family(n, type, help, new ConcurrentHashMap<>(), null));
        if (f.type() != type) {
            throw new IllegalArgumentException(name + " is a " + f.type() + ", not a " + type);
        }
        return this;
    }

    /** A gauge read at scrape time; the supplier must be cheap and must not throw. */
    public Metrics gauge(String name, String help, Supplier<List<Sample>> supplier) {
        checkName(name);
        Objects.requireNonNull(supplier, "supplier");
        families.put(name, new Family(name, Type.GAUGE, help, Map.of(), supplier));
        return this;
    }

    /** Adds one to a declared counter. {@code labels}: name, value pairs. */
    public void increment(String name, String... labels) {
        series(name, Type.COUNTER, labels)[0].add(1);
    }

    /** Records one duration in a declared summary. */
    public void observe(String name, Duration d, String... labels) {
        DoubleAdder[] s = series(name, Type.SUMMARY, labels);
        s[0].add(1);
        s[1].add(d.toNanos() / 1e9);
    }

    private DoubleAdder[] series(String name, Type type, String[] labels) {
        Family f = families.get(name);
        if (f == null || f.type() != type) {
            throw new IllegalArgumentException("no " + type.name().toLowerCase() + " named " + name + " is declared");
        }
        if (labels.length % 2 != 0) {
            throw new IllegalArgumentException(name + ": labels come in name, value pairs: " + Arrays.toString(labels));
        }
        return f.series().computeIfAbsent(List.of(labels), k -> new DoubleAdder[] {new DoubleAdder(), new DoubleAdder()});
    }

    /** The value of a counter series, or the count of a summary series (0 when never touched); for tests. */
    public double value(String name, String... labels) {
        Family f = families.get(name);
        if (f == null) {
            throw new IllegalArgumentException("no metric named " + name);
        }
        DoubleAdder[] s = f.series().get(List.of(labels));
        return s == null ? 0 : s[0].sum();
    }

    /** Every metric in the Prometheus text format. */
    public String scrape() {
        StringBuilder b = new StringBuilder(2048);
        for (Family f : families.values()) {
            b.append("# HELP ").append(f.name()).append(' ').append(escapeHelp(f.help())).append('\n');
            b.append("# TYPE ").append(f.name()).append(' ').append(f.type().name().toLowerCase()).append('\n');
            switch (f.type()) {
                case GAUGE -> {
                    List<Sample> samples;
                    try {
                        samples = f.gauge().get();
                    } catch (RuntimeException e) {
                        samples = List.of();
                    }
                    for (Sample s : samples) {
                        line(b, f.name(), List.of(s.labels()), s.value());
                    }
                }
                case COUNTER -> sorted(f).forEach((labels, v) -> line(b, f.name(), labels, v[0].sum()));
                case SUMMARY -> sorted(f).forEach((labels, v) -> {
                    line(b, f.name() + "_count", labels, v[0].sum());
                    line(b, f.name() + "_sum", labels, v[1].sum());
                });
            }
        }
        return b.toString();
    }

    private static Map<List<String>, DoubleAdder[]> sorted(Family f) {
        Map<List<String>, DoubleAdder[]> m = new TreeMap<>((x, y) -> String.join("\u0000", x)
                .compareTo(String.join("\u0000", y)));
        m.putAll(f.series());
        return m;
    }

    private static void line(StringBuilder b, String name, List<String> labels, double value) {
        b.append(name);
        if (!labels.isEmpty()) {
            List<String> parts = new ArrayList<>();
            for (int i = 0; i + 1 < labels.size(); i += 2) {
                parts.add(labels.get(i) + "=\"" + escapeLabel(labels.get(i + 1)) + "\"");
            }
            b.append('{').append(String.join(",", parts)).append('}');
        }
        b.append(' ');
        if (value == Math.rint(value) && Math.abs(value) < 1e15) {
            b.append((long) value);
        } else {
            b.append(value);
        }
        b.append('\n');
    }

    private static String escapeLabel(String v) {
        return (v == null ? "" : v).replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    private static String escapeHelp(String v) {
        return v.replace("\\", "\\\\").replace("\n", "\\n");
    }
}
