package profrj.harness;

/**
 * Calls at a pace a trace writer can follow (scripts/trace-bench): each call of {@code work} does
 * about a microsecond of arithmetic, so with the trace on, the cost measured is the probes' on the
 * program's thread, not the writer's. Arguments: calls, iterations per call. Prints "calls=N" and
 * "bench-ms=N" (the timed calls only, after a warm-up).
 */
public class TraceBench {
    static volatile long sink;

    static long work(long seed, int iterations) {
        long x = seed | 1;
        for (int i = 0; i < iterations; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }

    public static void main(String[] args) {
        long calls = Long.parseLong(args[0]);
        int iterations = Integer.parseInt(args[1]);
        for (int i = 0; i < 20_000; i++) {
            sink += work(i, iterations);
        }
        long t = System.nanoTime();
        long s = 0;
        for (long i = 0; i < calls; i++) {
            s += work(i, iterations);
        }
        sink += s;
        System.out.println("calls=" + calls);
        System.out.println("bench-ms=" + (System.nanoTime() - t) / 1_000_000);
    }
}
