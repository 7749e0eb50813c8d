package profrj.harness;

/**
 * Allocation-heavy fixed work for the memory mode's overhead (scripts/memory-bench). Arguments:
 * threads, total allocations (split evenly), and optionally the work between allocations (rounds
 * of a xorshift step, default 0). Each thread allocates small objects in a loop, every one
 * escaping into a 256-slot ring, and keeps 1 in 100 until the end. Prints, for the work alone
 * (JVM start-up and a warm-up excluded): "bench-ms=N", its wall time; "bench-cpu-ms=N", the
 * process CPU time meanwhile; "bench-gc-ms=N", the time in GC pauses meanwhile;
 * "bench-thread-cpu-ms=N", the CPU time of the allocating threads themselves; and "allocs=N",
 * the objects and arrays it allocated.
 */
public class AllocBench {
    static final class Item {
        final long a;
        final int b;

        Item(long a, int b) {
            this.a = a;
            this.b = b;
        }
    }

    static volatile long sink;

    static int spin;

    static long work(long n, long seed) {
        int rounds = spin;
        Object[] ring = new Object[256];
        Object[] kept = new Object[(int) (n / 100) + 1];
        long s = 0;
        int k = 0;
        for (long i = 0; i < n; i++) {
            long x = seed + i;
            for (int r = 0; r < rounds; r++) {
                x ^= x << 13;
                x ^= x >>> 7;
                x ^= x << 17;
            }
            Item o = new Item(x, (int) i);
            ring[(int) i & 255] = o;
            if (i % 100 == 0) {
                kept[k++] = o;
            }
            s += o.b;
        }
        return s + kept.length + ring.length;
    }

    /** Time in GC pauses so far (every collector's MXBean). */
    static long gcMs() {
        long t = 0;
        for (java.lang.management.GarbageCollectorMXBean b :
                java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
            t += Math.max(0, b.getCollectionTime());
        }
        return t;
    }

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        long allocs = Long.parseLong(args[1]);
        spin = args.length > 2 ? Integer.parseInt(args[2]) : 0;
        for (int i = 0; i < 20; i++) {
            sink += work(100_000, i);
        }
        System.gc();
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean)
                        java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        long per = allocs / threads;
        Thread[] ts = new Thread[threads];
        java.lang.management.ThreadMXBean tm = java.lang.management.ManagementFactory.getThreadMXBean();
        long[] threadCpu = new long[threads];
        for (int t = 0; t < threads; t++) {
            final long base = t * per;
            final int slot = t;
            ts[t] = new Thread(() -> {
                long c0 = tm.getCurrentThreadCpuTime();
                sink += work(per, base);
                threadCpu[slot] = tm.getCurrentThreadCpuTime() - c0;
            }, "alloc-" + t);
        }
        long gcStart = gcMs();
        long cpuStart = os.getProcessCpuTime();
        long start = System.nanoTime();
        for (Thread t : ts) {
            t.start();
        }
        for (Thread t : ts) {
            t.join();
        }
        long ms = (System.nanoTime() - start) / 1_000_000;
        long cpuMs = (os.getProcessCpuTime() - cpuStart) / 1_000_000;
        System.out.println("bench-ms=" + ms);
        System.out.println("bench-cpu-ms=" + cpuMs);
        System.out.println("bench-gc-ms=" + (gcMs() - gcStart));
        long own = 0;
        for (long c : threadCpu) {
            own += c;
        }
        System.out.println("bench-thread-cpu-ms=" + own / 1_000_000);
        System.out.println("allocs=" + (per * threads + 2L * threads));
    }
}
