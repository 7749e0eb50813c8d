package profrj.harness;

/**
 * The template of {@link OddJavaNames}: every "ODD" in its class file's strings (its name, its
 * methods' names, its descriptors, its source file) is replaced before it is defined, so its name
 * and methods hold what Java source cannot write. Never loaded under this name.
 */
public class OddNameODD {
    static volatile Object sink;
    static final Object[] kept = new Object[64];
    static final OddNameODD LOCK = new OddNameODD();

    /** Burns CPU for {@code ms}, making 16 KB arrays and keeping the last 64 objects made. */
    public static long workODD(long ms) {
        long end = System.nanoTime() + ms * 1_000_000L;
        long x = 1;
        int n = 0;
        while (System.nanoTime() < end) {
            for (int i = 0; i < 10_000; i++) {
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
            }
            sink = new OddNameODD[4096];
            kept[n++ & 63] = new OddNameODD();
            x = LOCK.mixODD(x);
        }
        return x;
    }

    /** An instance method with a loop: its stack map frames hold {@code this}, of this class. */
    long mixODD(long x) {
        for (int i = 0; i < 4; i++) {
            x += i;
        }
        return x;
    }

    /** Holds {@code LOCK} for 1 ms, {@code times} times. */
    public static void holdODD(int times) {
        for (int t = 0; t < times; t++) {
            synchronized (LOCK) {
                long end = System.nanoTime() + 1_000_000L;
                while (System.nanoTime() < end) {
                    sink = LOCK;
                }
            }
        }
    }
}
