package profrj.harness;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Fixed-work benchmark for overhead measurements (scripts/bench).
 * Arguments: threads, total work items. The items are split evenly across the
 * threads; each item builds, sorts and folds a small collection through a few
 * call levels, so stacks are realistic. Prints "bench-ms=N": wall time of the
 * work alone (JVM start-up and exit excluded), and "bench-cpu-ms=N": CPU time
 * the whole process (every thread, the agent's included) used meanwhile.
 */
public class Bench {
    static volatile long sink;

    static long item(long seed) {
        List<Integer> list = new ArrayList<>(256);
        long x = seed | 1;
        for (int i = 0; i < 256; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            list.add((int) x);
        }
        Collections.sort(list);
        return fold(list, 3);
    }

    static long fold(List<Integer> list, int depth) {
        if (depth > 0) {
            return fold(list, depth - 1) + depth;
        }
        Map<Integer, Long> buckets = new HashMap<>();
        for (int v : list) {
            buckets.merge(v & 63, (long) v, Long::sum);
        }
        long s = 0;
        for (long v : buckets.values()) {
            s += v;
        }
        return s;
    }

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        long items = Long.parseLong(args[1]);
        // Warm-up outside the timed region, so JIT compilation is not measured.
        for (int i = 0; i < 20_000; i++) {
            sink += item(i);
        }
        Thread[] ts = new Thread[threads];
        long per = items / threads;
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long cpuStart = os.getProcessCpuTime();
        long start = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            final long base = t * per;
            ts[t] = new Thread(() -> {
                long s = 0;
                for (long i = 0; i < per; i++) {
                    s += item(base + i);
                }
                sink += s;
            }, "bench-" + t);
            ts[t].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        long ms = (System.nanoTime() - start) / 1_000_000;
        long cpuMs = (os.getProcessCpuTime() - cpuStart) / 1_000_000;
        System.out.println("bench-ms=" + ms);
        System.out.println("bench-cpu-ms=" + cpuMs);
    }
}
