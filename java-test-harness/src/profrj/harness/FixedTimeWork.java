package profrj.harness;

/**
 * Steady-state overhead: N threads (argument 1) each repeat the same unit of
 * work (a 20-deep call chain ending in BusyThreads.spin) for MS milliseconds
 * (argument 2), all at once, and the program prints "units=U", the units done
 * in all. With every core kept busy for a fixed time, a profiler's cost shows
 * as fewer units: less noisy than timing a fixed amount of work, and free of
 * start-up and warm-up.
 */
public class FixedTimeWork {
    static volatile long sink;

    static long chain(long x, int depth) {
        return depth == 0 ? BusyThreads.spin(x) : chain(x + 1, depth - 1);
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        long ms = Long.parseLong(args[1]);
        long[] units = new long[n];
        Thread[] ts = new Thread[n];
        long end = System.nanoTime() + ms * 1_000_000L;
        for (int i = 0; i < n; i++) {
            final int k = i;
            ts[i] = new Thread(() -> {
                long x = k + 1;
                long u = 0;
                while (System.nanoTime() < end) {
                    x = chain(x, 20);
                    u++;
                }
                sink += x;
                units[k] = u;
            }, "work-" + i);
            ts[i].start();
        }
        long total = 0;
        for (int i = 0; i < n; i++) {
            ts[i].join();
            total += units[i];
        }
        System.out.println("units=" + total);
    }
}
