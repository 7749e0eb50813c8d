package profrj.harness;

/**
 * Two methods sharing the main thread's CPU in a ratio given on the command
 * line, for comparing snapshots: alpha() and beta() each run their own loop
 * (no callee, so their time is their own), `a` and `b` units per round.
 * Arguments: milliseconds (default 2000), a (default 3), b (default 1).
 */
public class CpuRatio {
    static volatile long sink;

    static long alpha(long seed, int units) {
        long x = seed | 1;
        for (long i = 0; i < 20_000L * units; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }

    static long beta(long seed, int units) {
        long x = seed | 3;
        for (long i = 0; i < 20_000L * units; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }

    public static void main(String[] args) {
        long millis = args.length > 0 ? Long.parseLong(args[0]) : 2000;
        int a = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        int b = args.length > 2 ? Integer.parseInt(args[2]) : 1;
        long end = System.nanoTime() + millis * 1_000_000L;
        while (System.nanoTime() < end) {
            sink += alpha(sink, a);
            sink += beta(sink, b);
        }
        System.out.println("sink=" + sink);
    }
}
