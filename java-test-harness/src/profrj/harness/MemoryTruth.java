package profrj.harness;

/**
 * Memory ground truth: what is alive per allocating thread and class at exit, and the most
 * that ever was at the end of a full GC (the instants {@code max} is taken at, docs/MEMORY.md),
 * known by construction (tests/memory.rs asserts each):
 *
 * <ul>
 *   <li>main keeps 1,000 {@code Kept} (one {@code Kept[]} holds them): count 1000, max 1000;
 *   <li>main holds 500 {@code Dropped} at once (in one {@code Dropped[]}) across a full GC,
 *       then drops them and forces a GC: count 0, max 500; the array: count 0, max 1;
 *   <li>main keeps 7 {@code long[]} and 3 {@code String[][]} (one multianewarray each; its inner
 *       arrays are not counted), and drops 40 {@code long[]} one at a time, none of them alive
 *       at any full GC: max 7;
 *   <li>20 {@code Kept} more from reflection (count 1020 in all), 3 {@code int[]} from {@code
 *       Array.newInstance}, and 20,000 clones of {@code
 *       Sheep} kept (the original too: 20,001), the clones made in a loop hot enough to compile;
 *   <li>threads "alloc-a" and "alloc-b" keep 300 and 200 {@code Shared}: two rows;
 *   <li>main holds 400 {@code Wave} at once across a full GC, drops them and forces a GC, three
 *       times: count 0, max 400 (each GC frees a wave before the next one is made);
 *   <li>main makes 6,000,000 {@code Churn} (288 MB, more than the tests' 256 MB heap, so GCs
 *       run meanwhile) and keeps none: count 0; at most 65 alive at once (64 in the ring, one in
 *       hand), so max at most 65.
 * </ul>
 */
public class MemoryTruth {
    static final class Kept {}

    static final class Dropped {
        final int v;

        Dropped(int v) {
            this.v = v;
        }
    }

    static final class Sheep implements Cloneable {
        int wool;

        Sheep copy() throws CloneNotSupportedException {
            return (Sheep) clone();
        }
    }

    static final class Shared {}

    static final class Wave {}

    static final class Churn {
        long a, b, c, d;
    }

    static Object[] keep = new Object[16];
    static volatile long sink;

    static void keepShared(int n, Object[] into) {
        for (int i = 0; i < n; i++) {
            into[i] = new Shared();
        }
    }

    /**
     * A full GC while main holds what it made, then time for a profiler to read that GC's end
     * before the next one starts ({@code memory} reads a full collection's figures after it, on
     * its own thread, and loses them if another GC starts first: docs/MEMORY.md).
     */
    static void heldAcrossAFullGc() throws InterruptedException {
        System.gc();
        Thread.sleep(500);
    }

    public static void main(String[] args) throws Exception {
        Kept[] kept = new Kept[1000];
        for (int i = 0; i < kept.length; i++) {
            kept[i] = new Kept();
        }
        keep[0] = kept;

        Dropped[] held = new Dropped[500];
        for (int i = 0; i < held.length; i++) {
            held[i] = new Dropped(i);
        }
        for (Dropped d : held) {
            sink += d.v;
        }
        heldAcrossAFullGc(); // the 500 alive at a full collection's end: max 500
        held = null;

        long[][] longs = new long[7][];
        keep[1] = longs; // one long[][] (anewarray of long[])
        for (int i = 0; i < 7; i++) {
            longs[i] = new long[i + 1];
        }
        for (int i = 0; i < 40; i++) {
            long[] tmp = new long[8];
            sink += tmp.length;
        }
        String[][][] grids = new String[3][][];
        keep[2] = grids;
        for (int i = 0; i < 3; i++) {
            grids[i] = new String[2][4];
        }

        // 20: past the 15 calls after which JDK 17 generates a bytecode accessor.
        Object[] reflected = new Object[20];
        keep[3] = reflected;
        for (int i = 0; i < 20; i++) {
            reflected[i] = Kept.class.getDeclaredConstructor().newInstance();
        }

        Object[] made = new Object[3];
        keep[8] = made;
        for (int i = 0; i < 3; i++) {
            made[i] = java.lang.reflect.Array.newInstance(int.class, 4);
        }

        Sheep dolly = new Sheep();
        Sheep[] flock = new Sheep[20_000];
        keep[4] = flock;
        keep[5] = dolly;
        for (int i = 0; i < flock.length; i++) {
            flock[i] = dolly.copy();
        }

        Object[] a = new Object[300];
        Object[] b = new Object[200];
        keep[6] = a;
        keep[7] = b;
        Thread ta = new Thread(() -> keepShared(300, a), "alloc-a");
        Thread tb = new Thread(() -> keepShared(200, b), "alloc-b");
        ta.start();
        tb.start();
        ta.join();
        tb.join();

        for (int w = 0; w < 3; w++) {
            Wave[] wave = new Wave[400];
            for (int i = 0; i < wave.length; i++) {
                wave[i] = new Wave();
            }
            sink += wave.length;
            heldAcrossAFullGc(); // this wave alive at a full collection's end: max 400
            wave = null;
            System.gc();
        }

        Object[] ring = new Object[64];
        for (int i = 0; i < 6_000_000; i++) {
            ring[i & 63] = new Churn();
        }
        ring = null;

        System.gc();
        System.out.println("kept " + kept.length + " " + flock.length);
    }
}
