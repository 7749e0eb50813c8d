package profrj.harness;

import java.util.HashMap;
import java.util.Map;

/**
 * A live set of the JDK's objects only (issue 43): thread "jdk-live" fills a {@code
 * HashMap<Integer, String>} with N (argument 1, default 10,000) entries, keys 1,000 and up (so
 * no {@code Integer} comes from the JDK's cache of -128..127), each value {@code
 * String.valueOf(key)}; then replaces every entry's value R times (argument 2, default 3), each
 * replacement leaving the old {@code String} (and its {@code byte[]}) to die; then ends. The
 * map stays reachable from a static field until exit.
 *
 * <p>Known by construction, with the JDK in scope ({@code include=*}), on thread "jdk-live" at
 * exit: N {@code java.util.HashMap$Node}, N {@code java.lang.Integer}, N {@code
 * java.lang.String}, N {@code byte[]} (the strings' values, compact strings: Latin-1), one {@code
 * java.util.HashMap} and one {@code java.util.HashMap$Node[]} (its table; the smaller tables of
 * its resizes died) alive; N × (R + 1) strings made.
 */
public class JdkLiveSet {
    static Map<Integer, String> kept;

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        Thread t = new Thread(() -> kept = fill(n, rounds), "jdk-live");
        t.start();
        t.join();
        System.out.println("entries=" + kept.size());
    }

    static Map<Integer, String> fill(int n, int rounds) {
        Map<Integer, String> map = new HashMap<>();
        for (int i = 0; i < n; i++) {
            int key = 1000 + i;
            map.put(key, String.valueOf(key));
        }
        for (int r = 0; r < rounds; r++) {
            for (Map.Entry<Integer, String> e : map.entrySet()) {
                e.setValue(String.valueOf(e.getKey() + r));
            }
        }
        return map;
    }
}
