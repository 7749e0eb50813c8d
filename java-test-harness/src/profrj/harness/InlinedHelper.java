package profrj.harness;

/**
 * Safepoint-bias ground truth. run() loops over five mixing steps of its own
 * and a call to helper(), twenty identical steps with no loop and no call:
 * the JIT inlines helper() into run()'s loop and leaves it no safepoint poll,
 * so a sampler that only sees threads at safepoints never sees helper().
 * By construction helper() holds 20 of every 25 steps: 80% of the CPU.
 * Argument: milliseconds to run (default 3000).
 */
public class InlinedHelper {
    static volatile long sink;
    static final long K = 0x9E3779B97F4A7C15L;

    static long helper(long x) {
        x = (x ^ (x >>> 7)) * K;
        x = (x ^ (x >>> 7)) * K;
        x = (x ^ (x >>> 7)) * K;
        x = (x ^ (x >>> 7)) * K;
        x = (x ^ (x >>> 7)) * K;
        x = (x ^ (x >>> 7)) * K;
        x = (x ^ (x >>> 7)) * K;
        x = (x ^ (x >>> 7)) * K;
        x = (x ^ (x >>> 7)) * K;
        x = (x ^ (x >>> 7)) * K;
        x = (x ^ (x >>> 7)) * K;
        x = (x ^ (x >>> 7)) * K;
        x = (x ^ (x >>> 7)) * K;
        x = (x ^ (x >>> 7)) * K;
        x = (x ^ (x >>> 7)) * K;
        x = (x ^ (x >>> 7)) * K;
        x = (x ^ (x >>> 7)) * K;
        x = (x ^ (x >>> 7)) * K;
        x = (x ^ (x >>> 7)) * K;
        x = (x ^ (x >>> 7)) * K;
        return x;
    }

    static long run(long x, long end) {
        while (System.nanoTime() < end) {
            for (int i = 0; i < 10_000; i++) {
                x = (x ^ (x >>> 7)) * K;
                x = (x ^ (x >>> 7)) * K;
                x = (x ^ (x >>> 7)) * K;
                x = (x ^ (x >>> 7)) * K;
                x = (x ^ (x >>> 7)) * K;
                x = helper(x);
            }
        }
        return x;
    }

    public static void main(String[] args) {
        long ms = args.length > 0 ? Long.parseLong(args[0]) : 3000;
        sink = run(1, System.nanoTime() + ms * 1_000_000L);
    }
}
