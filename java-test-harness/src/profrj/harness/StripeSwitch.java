package profrj.harness;

import java.lang.reflect.Field;

/**
 * Ground truth for coverage's one-thread copy (tests/coverage.rs): while main runs alone, every
 * call counts in copy 0 of its method's counters; when a second thread starts, the agent switches
 * every call site to copies by thread (profrj.runtime.Probe$Stripes' {@code many}, read here
 * through reflection before and after). {@code count} runs 1,000 turns in main, then 1,000 in each
 * of two threads at once, then 1,000 in main again: its loop line counts 4,000 turns, exactly.
 *
 * <p>Prints {@code before=B after=A}: whether the switch was made before the threads and after.
 */
public class StripeSwitch {
    static long sink;

    static long count(int turns) {
        long s = 0;
        for (int i = 0; i < turns; i++) {
            s += i;
        }
        return s;
    }

    static boolean switched() throws ReflectiveOperationException {
        Class<?> stripes = Class.forName("profrj.runtime.Probe$Stripes", true, null);
        Field many = stripes.getDeclaredField("many");
        many.setAccessible(true);
        return many.getBoolean(null);
    }

    public static void main(String[] args) throws Exception {
        sink += count(1000);
        boolean before = switched();
        Thread a = new Thread(() -> sink += count(1000));
        Thread b = new Thread(() -> sink += count(1000));
        a.start();
        b.start();
        a.join();
        b.join();
        sink += count(1000);
        System.out.println("before=" + before + " after=" + switched());
    }
}
