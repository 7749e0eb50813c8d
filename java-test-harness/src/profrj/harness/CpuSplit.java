package profrj.harness;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * Sampler ground truth. By construction:
 * - main spends its CPU in heavy() and light() in a 3:1 ratio (heavy runs three
 *   identical work units per round, light one);
 * - "sleeper" sleeps the whole run (daemon, still alive at exit);
 * - "napper" sleeps 500 ms and ends (elapsed ~500 ms, CPU ~0, isAlive=false);
 * - "burner" burns exactly BURN_NS of its own CPU time and ends, printing the
 *   CPU time it measured itself so the test can compare the agent's figure;
 * - two threads are both named "twin".
 * Argument: how long main runs the split, in milliseconds (default 3000).
 */
public class CpuSplit {
    static final long BURN_NS = 200_000_000L;
    static volatile long sink;

    /** One unit of pure CPU work (xorshift; no allocation, no calls). */
    static long unit(long seed) {
        long x = seed | 1;
        for (long i = 0; i < 20_000; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }

    static void heavy() {
        for (int i = 0; i < 3; i++) {
            sink += unit(sink + i);
        }
    }

    static void light() {
        sink += unit(sink + 7);
    }

    static void sleepQuietly(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    public static void main(String[] args) throws Exception {
        long millis = args.length > 0 ? Long.parseLong(args[0]) : 3000;
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        long[] burnerCpu = new long[1];

        Thread sleeper = new Thread(() -> sleepQuietly(600_000), "sleeper");
        sleeper.setDaemon(true);
        Thread napper = new Thread(() -> sleepQuietly(500), "napper");
        Thread burner = new Thread(() -> {
            while (mx.getCurrentThreadCpuTime() < BURN_NS) {
                sink += unit(sink);
            }
            burnerCpu[0] = mx.getCurrentThreadCpuTime();
        }, "burner");
        Thread twinA = new Thread(() -> sleepQuietly(100), "twin");
        Thread twinB = new Thread(() -> sleepQuietly(100), "twin");
        for (Thread t : new Thread[] {sleeper, napper, burner, twinA, twinB}) {
            t.start();
        }

        long end = System.nanoTime() + millis * 1_000_000L;
        while (System.nanoTime() < end) {
            heavy();
            light();
        }
        for (Thread t : new Thread[] {napper, burner, twinA, twinB}) {
            t.join();
        }
        System.out.println("burner-cpu-ns=" + burnerCpu[0]);
    }
}
