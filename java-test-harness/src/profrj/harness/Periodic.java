package profrj.harness;

/**
 * Aliasing ground truth: main alternates between phaseA() and phaseB() in
 * 5 ms slots locked to the monotonic clock (A in even slots, B in odd), so
 * each gets exactly half the time. A sampler whose period is a multiple of
 * 10 ms and that never varies its timing would see only one of them.
 * Argument: run time in ms (default 3000).
 */
public class Periodic {
    static final long SLOT_NS = 5_000_000L;
    static volatile long sink;

    static boolean inA(long t) {
        return (t / SLOT_NS) % 2 == 0;
    }

    static void phaseA() {
        while (inA(System.nanoTime())) {
            sink++;
        }
    }

    static void phaseB() {
        while (!inA(System.nanoTime())) {
            sink--;
        }
    }

    public static void main(String[] args) {
        long millis = args.length > 0 ? Long.parseLong(args[0]) : 3000;
        long end = System.nanoTime() + millis * 1_000_000L;
        while (System.nanoTime() < end) {
            if (inA(System.nanoTime())) {
                phaseA();
            } else {
                phaseB();
            }
        }
        System.out.println("done");
    }
}
