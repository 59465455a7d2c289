package dev.agentx.clarify.monitor;

import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * How the stuck rule judges that two texts say the same thing: the Jaccard index of their word
 * sets, |A and B| / |A or B|, above {@link #THRESHOLD} (0.8, what the original system used).
 * Words are maximal runs of letters and digits, lower-cased; punctuation, order and repetition do
 * not count. Two texts without any word are the same only if they are equal apart from case and
 * surrounding space.
 */
public final class WordSimilarity {
    /** Strictly above this, two texts are the same for the stuck rule. */
    public static final double THRESHOLD = 0.8;

    private static final Pattern NON_WORD = Pattern.compile("[^\\p{L}\\p{N}]+");

    private WordSimilarity() {
    }

    public static Set<String> words(String text) {
        Set<String> out = new HashSet<>();
        for (String w : NON_WORD.split(text.toLowerCase(Locale.ROOT))) {
            if (!w.isEmpty()) {
                out.add(w);
            }
        }
        return out;
    }

    /** The Jaccard index of the two texts' word sets, 0.0 to 1.0. */
    public static double jaccard(String a, String b) {
        Set<String> x = words(a);
        Set<String> y = words(b);
        if (x.isEmpty() || y.isEmpty()) {
            return a.strip().equalsIgnoreCase(b.strip()) ? 1.0 : 0.0;
        }
        int common = 0;
        for (String w : x) {
            if (y.contains(w)) {
                common++;
            }
        }
        return common / (double) (x.size() + y.size() - common);
    }

    public static boolean similar(String a, String b) {
        return jaccard(a, b) > THRESHOLD;
    }
}
