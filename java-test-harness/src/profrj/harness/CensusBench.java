package profrj.harness;

/**
 * What a heap census costs (scripts/memory-bench; the agent is agent/examples/census_cost.rs):
 * JVMTI IterateThroughHeap over a heap of {@code stamped} objects whose class is tagged (each
 * with a long field holding a stamp) and {@code others} whose class is not, visiting only the
 * tagged class's objects and reading their primitive fields; and, for scale, a walk that visits
 * every object. Arguments: stamped objects, other objects, rounds (default 5). Prints one line
 * per round and per walk: {@code census objects=N found=F ms=T} or {@code walk objects=N ms=T}.
 */
public class CensusBench {
    static native void tagClass(Class<?> c);

    /** Visits the tagged class's objects: stamps found, and the ns it took in [1]. */
    static native long census(long[] ns);

    /** Visits every object: objects seen, and the ns it took in [1]. */
    static native long walk(long[] ns);

    static final long MAGIC = 0x5EA1L << 48;

    static final class Stamped {
        int a;
        Object r;
        long m;
        long b;
    }

    static final class Other {
        int x;
        long y;
        Object z;
    }

    public static void main(String[] args) {
        int stamped = Integer.parseInt(args[0]);
        int others = Integer.parseInt(args[1]);
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        Stamped[] s = new Stamped[stamped];
        for (int i = 0; i < stamped; i++) {
            s[i] = new Stamped();
            s[i].m = MAGIC | (i & 1023);
        }
        Other[] o = new Other[others];
        for (int i = 0; i < others; i++) {
            o[i] = new Other();
        }
        tagClass(Stamped.class);
        long[] ns = new long[2];
        for (int r = 0; r < rounds; r++) {
            System.gc();
            long found = census(ns);
            System.out.printf("census stamped=%d others=%d found=%d ms=%.2f%n",
                    stamped, others, found, ns[1] / 1e6);
            long all = walk(ns);
            System.out.printf("walk objects=%d ms=%.2f%n", all, ns[1] / 1e6);
        }
        System.out.println("kept " + s.length + " " + o.length);
    }
}
