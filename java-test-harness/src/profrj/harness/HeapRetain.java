package profrj.harness;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;

/**
 * A heap whose dominator tree is known by construction, for {@code profrj report} and {@code
 * profrj diff} of heap dumps:
 *
 * <ul>
 *   <li>{@link #cache}: a {@link Cache} whose one {@code HashMap} holds {@link #N} {@code
 *       long[ARRAY_LEN]} (keys: {@link Key}s of its own), so the map dominates every one of them;
 *   <li>{@link #pair}: two holders ({@link HolderA}, {@link HolderB}) sharing one {@link Shared}
 *       (and its {@code long[SHARED_LEN]}): neither holder dominates it, their {@link Pair} does;
 *   <li>{@link #leak}: a list that grows by {@link #K} {@link Leaked} objects (each with its own
 *       {@code long[LEAK_LEN]}) per round, made on a thread named {@code leaker}.
 * </ul>
 *
 * <p>Usage: {@code HeapRetain DIR [ROUNDS]}: builds the heap, writes {@code DIR/a.hprof}
 * (HotSpotDiagnosticMXBean, live objects), runs ROUNDS (default 3) rounds of the leak, writes
 * {@code DIR/b.hprof}, prints "done". So {@code diff a.hprof b.hprof} must find exactly K ×
 * ROUNDS more {@code Leaked}, retained by the list.
 */
public class HeapRetain {
    public static final int N = 300;
    public static final int ARRAY_LEN = 1000;
    public static final int SHARED_LEN = 5000;
    public static final int K = 40;
    public static final int LEAK_LEN = 16;

    /** Keys of the cache's map: objects of their own, dominated by the map. */
    static final class Key {
        final int k;

        Key(int k) {
            this.k = k;
        }

        @Override
        public int hashCode() {
            return k;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Key && ((Key) o).k == k;
        }
    }

    static final class Cache {
        final HashMap<Key, long[]> map = new HashMap<>();
    }

    static final class Shared {
        final long[] payload = new long[SHARED_LEN];
    }

    static final class HolderA {
        Shared shared;
    }

    static final class HolderB {
        Shared shared;
    }

    static final class Pair {
        final HolderA a = new HolderA();
        final HolderB b = new HolderB();
    }

    static final class Leaked {
        final long[] data = new long[LEAK_LEN];
    }

    static Cache cache;
    static Pair pair;
    static final ArrayList<Leaked> leak = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        String dir = args[0];
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        build();
        // Room in the list for every round: its backing array is not
        // replaced between the dumps, so only the Leaked objects grow.
        leak.ensureCapacity(K * (rounds + 1));
        dump(dir + "/a.hprof");
        for (int r = 0; r < rounds; r++) {
            Thread t = new Thread(HeapRetain::leakRound, "leaker");
            t.start();
            t.join();
        }
        dump(dir + "/b.hprof");
        System.out.println("done");
    }

    /**
     * The cache and the pair, made in a method of their own: no local variable of main's frame
     * (a GC root) may hold any of them when the heap is dumped.
     */
    static void build() {
        cache = new Cache();
        for (int i = 0; i < N; i++) {
            cache.map.put(new Key(i), new long[ARRAY_LEN]);
        }
        pair = new Pair();
        Shared shared = new Shared();
        pair.a.shared = shared;
        pair.b.shared = shared;
    }

    /** One round of the leak: K objects more, each allocated here. */
    static void leakRound() {
        for (int i = 0; i < K; i++) {
            leak.add(new Leaked());
        }
    }

    static void dump(String file) throws Exception {
        HotSpotDiagnosticMXBean bean =
                ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        bean.dumpHeap(file, true);
    }
}
