package profrj.harness;

/**
 * Allocations whose every sample is known (tests/golden.rs, with alloc=0
 * and -Xint): a thread started after the agent, so HotSpot samples its
 * every allocation from its first, makes a fixed set of objects through a
 * small call tree. (The main thread's first sample point is drawn when it
 * starts, at the interval then in force, so its samples vary.)
 */
public class GoldenAllocs {
    static Object[] sink = new Object[64];
    static int at;

    static void keep(Object o) {
        sink[at++ % sink.length] = o;
    }

    static void arrays(int n) {
        for (int i = 0; i < n; i++) {
            keep(new byte[16 + i]);
            keep(new long[2][3]);
        }
    }

    static void objects() {
        keep(new Object());
        keep(new int[] {1, 2, 3});
        arrays(2);
    }

    public static void main(String[] args) throws Exception {
        Thread t = new Thread(() -> {
            objects();
            arrays(3);
        }, "golden-allocator");
        t.start();
        t.join();
        System.out.println("allocated " + at);
    }
}
