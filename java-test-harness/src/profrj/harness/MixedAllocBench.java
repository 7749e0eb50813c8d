package profrj.harness;

import java.util.HashMap;

/**
 * The memory mode's cost per tracked allocation as threads are added (scripts/memory-bench
 * --threads, scripts/memory-many-core): every thread runs the same rounds, so with a core per
 * thread the wall time stays flat without a profiler, and a profiler whose cost per allocation
 * grows with the threads shows it directly. Each round: recursive calls (a small Fibonacci),
 * 40,000 objects of a user class (1 in 8 kept in a list until the round ends, the rest dropped
 * at once) and a {@code new HashMap} with 64 puts (its nodes and boxed keys are made inside the
 * JDK, out of the default scope; the map itself is a JDK object made here).
 *
 * <p>Arguments: threads, rounds per thread (default 300), objects per round (default 40,000),
 * arrays per round (default 0: {@code new long[4]} dropped at once, which the memory mode tracks
 * as it tracks JDK objects, with a weak reference each). Prints, for the timed rounds alone (JVM
 * start-up and 30 warm-up rounds on the main thread excluded): "bench-ms=N" (wall),
 * "bench-cpu-ms=N" (process CPU), "bench-gc-ms=N" (GC pauses, every collector's MXBean),
 * "bench-thread-cpu-ms=N" (the CPU of the threads running the rounds, summed), "threads=N" and
 * "allocs=N", the tracked allocations of one thread (objects, maps and arrays it made in the
 * timed rounds).
 */
public class MixedAllocBench {
    static final class Node {
        final int value;
        Node next;

        Node(int value) {
            this.value = value;
        }
    }

    static volatile long sink;

    static int fib(int n) {
        return n < 2 ? n : fib(n - 1) + fib(n - 2);
    }

    static long round(int r, int objects, int arrays) {
        Node kept = null;
        long sum = fib(12);
        for (int i = 0; i < objects; i++) {
            Node n = new Node(i ^ r);
            if ((i & 7) == 0) {
                n.next = kept;
                kept = n;
            }
            sum += n.value;
        }
        for (int i = 0; i < arrays; i++) {
            long[] a = new long[4];
            a[i & 3] = i;
            sum += a[0];
        }
        HashMap<Integer, Integer> map = new HashMap<>();
        for (int i = 0; i < 64; i++) {
            map.put(i, i * r);
        }
        for (Node n = kept; n != null; n = n.next) {
            sum += n.value & 1;
        }
        return sum + map.size();
    }

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 300;
        int objects = args.length > 2 ? Integer.parseInt(args[2]) : 40_000;
        int arrays = args.length > 3 ? Integer.parseInt(args[3]) : 0;
        for (int r = 0; r < 30; r++) {
            sink += round(r, objects, arrays);
        }
        System.gc();
        java.lang.management.ThreadMXBean tm =
                java.lang.management.ManagementFactory.getThreadMXBean();
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean)
                        java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        long[] threadCpu = new long[threads];
        Thread[] ts = new Thread[threads];
        java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        for (int t = 0; t < threads; t++) {
            final int slot = t;
            ts[t] = new Thread(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                long c0 = tm.getCurrentThreadCpuTime();
                long s = 0;
                for (int r = 0; r < rounds; r++) {
                    s += round(r, objects, arrays);
                }
                sink += s;
                threadCpu[slot] = tm.getCurrentThreadCpuTime() - c0;
            }, "mixed-" + t);
            ts[t].start();
        }
        long gcStart = AllocBench.gcMs();
        long cpuStart = os.getProcessCpuTime();
        long start = System.nanoTime();
        go.countDown();
        for (Thread t : ts) {
            t.join();
        }
        long ms = (System.nanoTime() - start) / 1_000_000;
        long cpuMs = (os.getProcessCpuTime() - cpuStart) / 1_000_000;
        long own = 0;
        for (long c : threadCpu) {
            own += c;
        }
        System.out.println("bench-ms=" + ms);
        System.out.println("bench-cpu-ms=" + cpuMs);
        System.out.println("bench-gc-ms=" + (AllocBench.gcMs() - gcStart));
        System.out.println("bench-thread-cpu-ms=" + own / 1_000_000);
        System.out.println("threads=" + threads);
        System.out.println("allocs=" + (long) rounds * (objects + arrays + 1));
    }
}
