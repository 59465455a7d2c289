package dev.agentx.clarify.bench;

/**
 * A row of the summary table bench/run puts at the top of its report: one line on standard output,
 * {@code SUMMARY|path|now|floor|goal}, which bench/run takes out of the Markdown and gathers
 * (bench/summary.awk computes the ratio and whether the goal is met).
 */
public final class Summary {
    private Summary() {
    }

    /**
     * @param now   the figure with its unit ("4.63 ms", "349 ops/s")
     * @param floor its baseline from the same run with its unit, or "-" where there is none
     * @param goal  "&lt;=2x" (a ratio to the floor), "&lt;200 ms", "&gt;=300 ops/s", "=0", or words
     */
    public static void row(String path, String now, String floor, String goal) {
        System.out.println("SUMMARY|" + path + "|" + now + "|" + floor + "|" + goal);
    }

    public static String ms(double ms) {
        return String.format("%.2f ms", ms);
    }
}
