package profrj.harness;

import java.util.ArrayList;
import java.util.List;

/**
 * Starts N threads (argument 1) one after another, each named "req-i" and
 * ended before the next starts, so the agent meets them in that order. Each
 * calls {@link #work} once, which makes K (argument 2) {@link Item}s kept
 * alive to the end and takes a lock the main thread does not hold. Known by
 * construction: N calls of work(), N x K Items alive at exit, made by the
 * req threads; the first 16 threads are req-0..req-15.
 *
 * <p>Optional: D (argument 3) more Items made and dropped by each thread,
 * and a System.gc() after every G threads (argument 4): N x (K + D) Items
 * made in all, N x K alive.
 */
public class ThreadChurn {
    static final class Item {
        final int n;

        Item(int n) {
            this.n = n;
        }
    }

    static final List<Item> KEPT = new ArrayList<>();
    static final Object LOCK = new Object();
    static volatile long sink;

    static void work(int k, int dropped) {
        List<Item> mine = new ArrayList<>(k);
        long s = 0;
        for (int i = 0; i < k; i++) {
            mine.add(new Item(i));
            s += i * 31L;
        }
        for (int i = 0; i < dropped; i++) {
            s += new Item(i).n;
        }
        synchronized (LOCK) {
            KEPT.addAll(mine);
            sink += s;
        }
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        int k = Integer.parseInt(args[1]);
        int dropped = args.length > 2 ? Integer.parseInt(args[2]) : 0;
        int gcEvery = args.length > 3 ? Integer.parseInt(args[3]) : 0;
        for (int i = 0; i < n; i++) {
            Thread t = new Thread(() -> work(k, dropped), "req-" + i);
            t.start();
            t.join();
            if (gcEvery > 0 && (i + 1) % gcEvery == 0) {
                System.gc();
            }
        }
        synchronized (LOCK) {
            System.out.println("threads=" + n + " kept=" + KEPT.size());
        }
    }
}
