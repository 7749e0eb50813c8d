package profrj.harness;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;

/**
 * What a large set of live tracked objects costs the GC (scripts/memory-bench): keeps N small
 * objects (argument 1), then makes M more that die young (argument 2), so young GCs run while the
 * N are alive. The memory mode looks at every tracked object still alive once per GC. Prints, for
 * the second phase: "churn-ms=N" (wall), "gcs=N" and "gc-ms=N" (collections and their time, from
 * the GarbageCollectorMXBeans), and "kept=N".
 */
public class LiveSetBench {
    static final class Item {
        final long v;

        Item(long v) {
            this.v = v;
        }
    }

    static long[] gcTotals() {
        long count = 0, ms = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            count += Math.max(0, gc.getCollectionCount());
            ms += Math.max(0, gc.getCollectionTime());
        }
        return new long[] {count, ms};
    }

    public static void main(String[] args) {
        int keep = Integer.parseInt(args[0]);
        int churn = Integer.parseInt(args[1]);
        Item[] kept = new Item[keep];
        for (int i = 0; i < keep; i++) {
            kept[i] = new Item(i);
        }
        System.gc();
        long[] before = gcTotals();
        long t = System.nanoTime();
        Object[] ring = new Object[256];
        for (int i = 0; i < churn; i++) {
            ring[i & 255] = new Item(i);
        }
        long ms = (System.nanoTime() - t) / 1_000_000;
        long[] after = gcTotals();
        System.out.println("churn-ms=" + ms + " gcs=" + (after[0] - before[0]) + " gc-ms="
                + (after[1] - before[1]) + " kept=" + kept.length);
    }
}
