package profrj.harness;

import java.util.concurrent.locks.ReentrantLock;

/**
 * Fixed lock-heavy work for the lock mode's cost (scripts/lock-bench). Arguments: a kind, threads,
 * and acquisitions per thread.
 *
 * <ul>
 *   <li>{@code sync}: each thread enters a monitor of its own (a shared field, so the compilers
 *       cannot drop the lock) and does a little work inside: no contention at all;
 *   <li>{@code contended}: the threads enter one shared monitor;
 *   <li>{@code reentrant}: the threads take one shared ReentrantLock;
 *   <li>{@code held}: the threads enter one shared monitor and hold it 1 ms (a sleep), so
 *       nearly every entry blocks.
 * </ul>
 *
 * A warm-up round first; then prints "bench-ms=N" (wall time of the work) and "bench-cpu-ms=N"
 * (the process CPU time meanwhile).
 */
public class LockBench {
    static final Object[] OWN = new Object[64];
    static final Object SHARED = new Object();
    static final ReentrantLock LOCK = new ReentrantLock();
    static long counter;
    static volatile long sink;

    static long work(String kind, int me, long n) {
        long s = 0;
        Object own = OWN[me];
        for (long i = 0; i < n; i++) {
            switch (kind) {
                case "sync":
                    synchronized (own) {
                        s += (i ^ (s << 1)) & 7;
                    }
                    break;
                case "held":
                    synchronized (SHARED) {
                        try {
                            Thread.sleep(1);
                        } catch (InterruptedException e) {
                            throw new RuntimeException(e);
                        }
                        s += ++counter & 7;
                    }
                    break;
                case "contended":
                    synchronized (SHARED) {
                        counter++;
                        s += counter & 7;
                    }
                    break;
                default:
                    LOCK.lock();
                    try {
                        counter++;
                        s += counter & 7;
                    } finally {
                        LOCK.unlock();
                    }
            }
        }
        return s;
    }

    static void round(String kind, int threads, long n) throws InterruptedException {
        Thread[] ts = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            final int me = t;
            ts[t] = new Thread(() -> sink += work(kind, me, n), "bench-" + t);
            ts[t].start();
        }
        for (Thread t : ts) t.join();
    }

    public static void main(String[] args) throws Exception {
        String kind = args[0];
        int threads = Integer.parseInt(args[1]);
        long n = Long.parseLong(args[2]);
        for (int i = 0; i < OWN.length; i++) OWN[i] = new Object();
        round(kind, threads, n / 4);
        java.lang.management.OperatingSystemMXBean os =
                java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        long cpu0 = ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
        long t0 = System.nanoTime();
        round(kind, threads, n);
        long t1 = System.nanoTime();
        long cpu1 = ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
        System.out.println("bench-ms=" + (t1 - t0) / 1_000_000);
        System.out.println("bench-cpu-ms=" + (cpu1 - cpu0) / 1_000_000);
    }
}
