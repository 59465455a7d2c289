package dev.agentx.clarify.bench;

import java.util.Arrays;
import java.util.List;

/** Percentiles of a sample, in milliseconds. */
public record Stats(int n, double p50, double p90, double p99, double max) {
    public static Stats ofNanos(List<Long> nanos) {
        long[] a = nanos.stream().mapToLong(Long::longValue).toArray();
        Arrays.sort(a);
        if (a.length == 0) {
            return new Stats(0, 0, 0, 0, 0);
        }
        return new Stats(a.length, ms(a, 0.50), ms(a, 0.90), ms(a, 0.99), a[a.length - 1] / 1e6);
    }

    private static double ms(long[] sorted, double q) {
        int i = (int) Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
        return sorted[i] / 1e6;
    }

    public String row() {
        return String.format("%.2f | %.2f | %.2f | %.2f", p50, p90, p99, max);
    }
}
