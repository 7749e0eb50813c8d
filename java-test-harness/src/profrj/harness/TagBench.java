package profrj.harness;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.util.Arrays;

/**
 * JVMTI tags against weak references, for tracking every allocated object's liveness
 * (scripts/memory-bench; the agent is agent/examples/tag_cost.rs). In one JVM, interleaved
 * rounds of the same small-allocation loop:
 *
 * <ul>
 *   <li>plain: allocate, store in a 1024-slot ring (so it escapes), read a field;
 *   <li>tag: the same plus {@code tag(o, k)}: a JNI call and a JVMTI SetTag; the GC then frees
 *       the tags and the agent counts the ObjectFree events;
 *   <li>weak: the same plus what profrj's memory mode does (a mirror of profrj.runtime's Local,
 *       Counter and Tracker): a thread-local lookup, a counter update and a {@code
 *       WeakReference} registered with a queue kept in a per-thread array that is compacted,
 *       after draining the queue, when full;
 *   <li>jniweak: the same as plain plus {@code weakRef(o)}: a JNI call and a JNI weak global
 *       reference kept in a per-thread list; after a GC a scan finds the cleared ones
 *       ({@code scanWeak}), which is how a tracker would see frees;
 * </ul>
 *
 * and the cost of one System.gc() after 2 million old objects died, untracked, tagged or weakly
 * referenced, plus the time until every free was reported (ObjectFree events counted, or weak
 * references taken from the queue).
 *
 * <p>Arguments: path of libtag_cost.so (the JVM must also run with it as -agentpath), rounds
 * (default 5), allocations per round (default 2,000,000), threads (default 1). Prints a line
 * per round ({@code round=i key=value...}), then the medians ({@code key=value}, one a line): ns
 * per allocation in wall time, in the allocating threads' CPU time (their own work: what a
 * neighbour on the machine does not inflate) and in the process's CPU time (GC and JVM service
 * threads included; this clock ticks in 10 ms), ms of GC pauses during each
 * loop, and ms of the System.gc() after 2 million died and until their frees were all seen.
 */
public class TagBench {
    static native void tag(Object o, long tag);

    static native long frees();

    static native long tagErrors();

    static native void weakRef(Object o);

    static native void flushWeak();

    static native long scanWeak();

    static final class Small {
        final int v;

        Small(int v) {
            this.v = v;
        }
    }

    // --- a mirror of profrj.runtime (Memory, Local, Counter, Tracker), one type ---

    static final ReferenceQueue<Object> QUEUE = new ReferenceQueue<Object>();

    static final class Counter {
        long allocated;
        long max;
        volatile long freed;
    }

    static final class Tracker extends WeakReference<Object> {
        final Counter counter;
        boolean dead;

        Tracker(Object o, Counter counter) {
            super(o, QUEUE);
            this.counter = counter;
        }
    }

    static final class Local {
        private Counter[] byType = {new Counter()};
        private Tracker[] kept = new Tracker[1024];
        private int keptCount;

        void track(Object o, int type) {
            Counter[] counters = byType;
            Counter c = counters[type];
            long live = ++c.allocated - c.freed;
            if (live > c.max) {
                c.max = live;
            }
            if (keptCount == kept.length) {
                compact();
            }
            kept[keptCount++] = new Tracker(o, c);
        }

        private void compact() {
            drain();
            int j = 0;
            for (int i = 0; i < keptCount; i++) {
                Tracker t = kept[i];
                if (!t.dead) {
                    kept[j++] = t;
                }
            }
            for (int i = j; i < keptCount; i++) {
                kept[i] = null;
            }
            keptCount = j;
            if (j > kept.length / 2) {
                kept = Arrays.copyOf(kept, kept.length * 2);
            }
        }
    }

    static final ThreadLocal<Local> LOCAL = ThreadLocal.withInitial(Local::new);

    static void track(Object o, int type) {
        if (o != null) {
            LOCAL.get().track(o, type);
        }
    }

    static int drain() {
        int n = 0;
        synchronized (QUEUE) {
            for (Tracker t = (Tracker) QUEUE.poll(); t != null; t = (Tracker) QUEUE.poll()) {
                Counter c = t.counter;
                c.freed = c.freed + 1;
                t.dead = true;
                n++;
            }
        }
        return n;
    }

    // --- the three loops ---

    static volatile long sink;

    static long plain(int n, int seed) {
        Object[] ring = new Object[1024];
        long s = 0;
        for (int i = 0; i < n; i++) {
            Small o = new Small(seed + i);
            ring[i & 1023] = o;
            s += o.v;
        }
        return s + ring.length;
    }

    static long tagged(int n, int seed) {
        Object[] ring = new Object[1024];
        long s = 0;
        for (int i = 0; i < n; i++) {
            Small o = new Small(seed + i);
            tag(o, i + 1L);
            ring[i & 1023] = o;
            s += o.v;
        }
        return s + ring.length;
    }

    static long weak(int n, int seed) {
        Object[] ring = new Object[1024];
        long s = 0;
        for (int i = 0; i < n; i++) {
            Small o = new Small(seed + i);
            track(o, 0);
            ring[i & 1023] = o;
            s += o.v;
        }
        return s + ring.length;
    }

    static long jniWeak(int n, int seed) {
        Object[] ring = new Object[1024];
        long s = 0;
        for (int i = 0; i < n; i++) {
            Small o = new Small(seed + i);
            weakRef(o);
            ring[i & 1023] = o;
            s += o.v;
        }
        flushWeak();
        return s + ring.length;
    }

    static final String[] KINDS = {"plain", "tag", "weak", "jniweak"};
    static long taggedTotal;

    static long loop(int kind, int n, int seed) {
        switch (kind) {
            case 0:
                return plain(n, seed);
            case 1:
                return tagged(n, seed);
            case 2:
                return weak(n, seed);
            default:
                return jniWeak(n, seed);
        }
    }

    static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    static long gcMs() {
        long t = 0;
        for (GarbageCollectorMXBean b : ManagementFactory.getGarbageCollectorMXBeans()) {
            t += Math.max(0, b.getCollectionTime());
        }
        return t;
    }

    /** No garbage, pending free or queued reference left from the previous phase. */
    static void settle() throws InterruptedException {
        System.gc();
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (frees() < taggedTotal && System.nanoTime() < deadline) {
            Thread.sleep(1);
        }
        Thread.sleep(20);
        drain();
        scanWeak();
    }

    static final java.lang.management.ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    /**
     * {wall ns, process CPU ns, GC ms, allocating threads' CPU ns} per allocation of one loop (GC
     * ms in all).
     */
    static double[] phase(int kind, int n, int threads, int seed) throws Exception {
        settle();
        final int per = n / threads;
        Thread[] ts = new Thread[threads];
        final long[] threadCpu = new long[threads];
        for (int t = 0; t < threads; t++) {
            final int base = seed + t * per;
            final int slot = t;
            ts[t] = new Thread(() -> {
                long c0 = THREADS.getCurrentThreadCpuTime();
                sink += loop(kind, per, base);
                threadCpu[slot] = THREADS.getCurrentThreadCpuTime() - c0;
            }, "tagbench-" + t);
        }
        long gc0 = gcMs();
        long cpu0 = OS.getProcessCpuTime();
        long t0 = System.nanoTime();
        for (Thread t : ts) {
            t.start();
        }
        for (Thread t : ts) {
            t.join();
        }
        long wall = System.nanoTime() - t0;
        long cpu = OS.getProcessCpuTime() - cpu0;
        long gc = gcMs() - gc0;
        if (kind == 1) {
            taggedTotal += (long) per * threads;
        }
        long total = (long) per * threads;
        long own = 0;
        for (long c : threadCpu) {
            own += c;
        }
        return new double[] {(double) wall / total, (double) cpu / total, gc, (double) own / total};
    }

    /** {ms of one System.gc() after n old objects died, ms more until every free was seen}. */
    static double[] gcCost(int kind, int n) throws Exception {
        settle();
        Small[] objs = new Small[n];
        Tracker[] refs = kind == 2 ? new Tracker[n] : null;
        Counter c = new Counter();
        for (int i = 0; i < n; i++) {
            Small o = new Small(i);
            objs[i] = o;
            if (kind == 1) {
                tag(o, i + 1L);
            } else if (kind == 2) {
                refs[i] = new Tracker(o, c);
            } else if (kind == 3) {
                weakRef(o);
            }
        }
        if (kind == 3) {
            flushWeak();
        }
        if (kind == 1) {
            taggedTotal += n;
        }
        System.gc(); // all old now, as long-lived objects would be
        Thread.sleep(20);
        long f0 = frees();
        objs = null;
        long t0 = System.nanoTime();
        System.gc();
        long t1 = System.nanoTime();
        long seen = 0;
        long deadline = t1 + 30_000_000_000L;
        if (kind == 1) {
            while ((seen = frees() - f0) < n && System.nanoTime() < deadline) {
                Thread.sleep(0, 100_000);
            }
        } else if (kind == 2) {
            while (seen < n && System.nanoTime() < deadline) {
                Tracker t = (Tracker) QUEUE.remove(1000);
                if (t != null) {
                    t.counter.freed++;
                    t.dead = true;
                    seen++;
                }
            }
        } else if (kind == 3) {
            seen = scanWeak(); // the scan after a GC: its time is the "after" figure
        } else {
            seen = n;
        }
        long t2 = System.nanoTime();
        Reference.reachabilityFence(refs);
        if (seen < n) {
            System.out.println("warning: only " + seen + " of " + n + " frees seen (" + KINDS[kind] + ")");
        }
        return new double[] {(t1 - t0) / 1e6, (t2 - t1) / 1e6};
    }

    static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        int m = s.length / 2;
        return s.length % 2 == 1 ? s[m] : (s[m - 1] + s[m]) / 2;
    }

    public static void main(String[] args) throws Exception {
        System.load(args[0]);
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
        int n = args.length > 2 ? Integer.parseInt(args[2]) : 2_000_000;
        int threads = args.length > 3 ? Integer.parseInt(args[3]) : 1;
        int gcN = 2_000_000;
        // [kind][measure][round]
        double[][][] loops = new double[KINDS.length][4][rounds];
        double[][][] gcs = new double[KINDS.length][2][rounds];
        System.out.println("threads=" + threads + " allocations-per-round=" + n + " rounds=" + rounds
                + " (after one warm-up round)");
        for (int r = -1; r < rounds; r++) {
            StringBuilder line = new StringBuilder(r < 0 ? "warm-up" : "round=" + r);
            for (int k = 0; k < KINDS.length; k++) {
                double[] m = phase(k, n, threads, r * 7919);
                line.append(String.format(" %s-ns=%.1f %s-thread-cpu-ns=%.1f %s-cpu-ns=%.1f %s-gc-ms=%.0f",
                        KINDS[k], m[0], KINDS[k], m[3], KINDS[k], m[1], KINDS[k], m[2]));
                if (r >= 0) {
                    for (int j = 0; j < 4; j++) {
                        loops[k][j][r] = m[j];
                    }
                }
            }
            for (int k = 0; k < KINDS.length; k++) {
                double[] g = gcCost(k, gcN);
                line.append(String.format(" gc-%s-ms=%.1f gc-%s-after-ms=%.1f", KINDS[k], g[0], KINDS[k], g[1]));
                if (r >= 0) {
                    gcs[k][0][r] = g[0];
                    gcs[k][1][r] = g[1];
                }
            }
            System.out.println(line);
        }
        settle();
        for (int k = 0; k < KINDS.length; k++) {
            System.out.printf("%s-ns=%.1f%n", KINDS[k], median(loops[k][0]));
            System.out.printf("%s-thread-cpu-ns=%.1f%n", KINDS[k], median(loops[k][3]));
            System.out.printf("%s-cpu-ns=%.1f%n", KINDS[k], median(loops[k][1]));
            System.out.printf("%s-gc-ms=%.1f%n", KINDS[k], median(loops[k][2]));
        }
        for (int k = 0; k < KINDS.length; k++) {
            System.out.printf("gc-%s-ms=%.1f%n", KINDS[k], median(gcs[k][0]));
            System.out.printf("gc-%s-after-ms=%.1f%n", KINDS[k], median(gcs[k][1]));
        }
        System.out.println("tagged=" + taggedTotal + " frees=" + frees() + " tag-errors=" + tagErrors());
    }
}
