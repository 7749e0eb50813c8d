package profrj.harness;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.CountDownLatch;

/**
 * Heap-dump ground truth (tests/heap_readers.rs): a heap whose objects, their fields, who made
 * them and where are known by construction, all reachable from statics of this class until the
 * JVM ends, so a dump taken while it waits or at VM exit holds each of them, and no more of its
 * classes:
 *
 * <ul>
 *   <li>thread "heap-a" makes {@link #N_A} {@code Leaf} at {@code SITE leaf-a} and {@link #N_INTS}
 *       {@code int[7]} holding 0..6 at {@code SITE ints};
 *   <li>thread "heap-b" makes {@link #N_B} {@code Leaf} at {@code SITE leaf-b} and {@link
 *       #N_BYTES} {@code byte[33]} holding -16..16 at {@code SITE bytes};
 *   <li>main makes one {@code Leaf[12]} at {@code SITE leaves} (site a's leaves 0..9, site b's
 *       leaf 0, null) and a chain of {@link #DEPTH} {@code Holder} at {@code SITE holder}.
 * </ul>
 *
 * <p>A leaf's {@code index} counts from 0 in its site, its {@code weight} is the site's base
 * ({@link #WEIGHT_A}, {@link #WEIGHT_B}: past an int's range) plus its index, and its {@code next}
 * is the leaf of the same site one index below (null at 0). A holder's {@code depth} is one more
 * than its {@code inner}'s, the innermost 0 with a null {@code inner}. The test reads the lines
 * of the {@code SITE} comments from this file: one allocation per such line.
 *
 * <p>Both threads stay alive (daemon, parked) to the end, so a dump names them (HotSpot writes a
 * thread root, with its serial number, for live threads only). With no argument, or {@code wait},
 * main prints {@code ready} once the heap is built and waits for a line (or the end) of stdin,
 * then exits; with {@code exit} it prints {@code ready} and returns at once, for a dump at VM
 * exit; with {@code late} it first prints {@code waiting} and builds nothing until a line comes
 * (a profiler attaches meanwhile).
 */
public class HeapTruth {
    static final int N_A = 1234, N_B = 567, N_INTS = 89, N_BYTES = 61, DEPTH = 25;
    static final int INT_LEN = 7, BYTE_LEN = 33, LEAF_ARRAY_LEN = 12;
    static final long WEIGHT_A = 1_000_000_000_000L, WEIGHT_B = 2_000_000_000_000L;

    static final class Leaf {
        final int index;
        final long weight;
        final Leaf next;

        Leaf(int index, long weight, Leaf next) {
            this.index = index;
            this.weight = weight;
            this.next = next;
        }
    }

    static final class Holder {
        final int depth;
        final Holder inner;

        Holder(int depth, Holder inner) {
            this.depth = depth;
            this.inner = inner;
        }
    }

    // What keeps the heap alive to the end: statics (a dump at exit finds no main frame).
    static volatile Leaf headA, headB;
    static final int[][] INTS = new int[N_INTS][];
    static final byte[][] BYTES = new byte[N_BYTES][];
    static Leaf[] leaves;
    static Holder holder;

    static void buildA() {
        Leaf prev = null;
        for (int i = 0; i < N_A; i++) {
            prev = new Leaf(i, WEIGHT_A + i, prev); // SITE leaf-a
        }
        headA = prev;
        for (int k = 0; k < N_INTS; k++) {
            int[] a = new int[INT_LEN]; // SITE ints
            for (int j = 0; j < INT_LEN; j++) {
                a[j] = j;
            }
            INTS[k] = a;
        }
    }

    static void buildB() {
        Leaf prev = null;
        for (int i = 0; i < N_B; i++) {
            prev = new Leaf(i, WEIGHT_B + i, prev); // SITE leaf-b
        }
        headB = prev;
        for (int k = 0; k < N_BYTES; k++) {
            byte[] b = new byte[BYTE_LEN]; // SITE bytes
            for (int j = 0; j < BYTE_LEN; j++) {
                b[j] = (byte) (j - 16);
            }
            BYTES[k] = b;
        }
    }

    /** Index {@code index} of the chain from {@code head} (its indexes count down to 0). */
    static Leaf leafAt(Leaf head, int index) {
        Leaf l = head;
        while (l.index != index) {
            l = l.next;
        }
        return l;
    }

    static void buildMain() {
        Leaf[] ls = new Leaf[LEAF_ARRAY_LEN]; // SITE leaves
        for (int i = 0; i < 10; i++) {
            ls[i] = leafAt(headA, i);
        }
        ls[10] = leafAt(headB, 0);
        leaves = ls;
        Holder h = null;
        for (int d = 0; d < DEPTH; d++) {
            h = new Holder(d, h); // SITE holder
        }
        holder = h;
    }

    /** A daemon thread that runs {@code build}, counts {@code built} down, then parks forever. */
    static Thread builder(String name, Runnable build, CountDownLatch built) {
        Thread t = new Thread(() -> {
            build.run();
            built.countDown();
            while (true) {
                try {
                    Thread.sleep(Long.MAX_VALUE);
                } catch (InterruptedException e) {
                    // parked for good: the dump must find this thread alive
                }
            }
        }, name);
        t.setDaemon(true);
        return t;
    }

    public static void main(String[] args) throws Exception {
        boolean exit = args.length > 0 && args[0].equals("exit");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        if (args.length > 0 && args[0].equals("late")) {
            // Nothing built until a line comes (a profiler attached meanwhile).
            System.out.println("waiting");
            System.out.flush();
            in.readLine();
        }
        CountDownLatch built = new CountDownLatch(2);
        builder("heap-a", HeapTruth::buildA, built).start();
        builder("heap-b", HeapTruth::buildB, built).start();
        built.await();
        buildMain();
        System.out.println("ready");
        System.out.flush();
        if (!exit) {
            in.readLine();
        }
    }
}
