package profrj.harness;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * JDK 21+ (tests/virtual_threads/memory_and_lock.rs): 8 virtual threads each keep 250 {@code Cell}s and make and
 * drop 10,000 more, and the main (platform) thread does the same once (dropping what it kept)
 * and then keeps 100: 2,100 alive at the end, 92,350
 * made. Virtual threads' objects go to the memory mode's weak references (they do not stamp), the
 * main thread's get a stamp. Reached by reflection, so the harness still compiles for 11.
 */
public class VirtualAlloc {
    static final class Cell {
        int v;
    }

    static final List<Object> KEEP = new ArrayList<>();

    static void make(List<Object> into) {
        for (int i = 0; i < 250; i++) {
            into.add(new Cell());
        }
        for (int i = 0; i < 10_000; i++) {
            Cell c = new Cell();
            c.v = i;
        }
    }

    public static void main(String[] args) throws Exception {
        make(new ArrayList<>()); // the class and its probes, on main: 250 kept for a moment
        List<Object> mine = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            mine.add(new Cell());
        }
        ExecutorService ex =
                (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        List<List<Object>> lists = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            List<Object> l = new ArrayList<>();
            lists.add(l);
            ex.submit(() -> make(l));
        }
        ex.shutdown();
        ex.awaitTermination(1, TimeUnit.MINUTES);
        KEEP.add(mine);
        KEEP.add(lists);
        System.out.println("done");
    }
}
