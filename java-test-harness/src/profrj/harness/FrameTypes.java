package profrj.harness;

/**
 * Frame types ground truth: how each sampled frame ran is known by
 * construction from the flags the test starts the JVM with.
 * <ul>
 * <li>{@code interpreted MS}: slow() loops for MS ms; the test excludes it
 * from compilation, so every sample with slow() on top finds it
 * interpreted.</li>
 * <li>{@code compiled MS}: warm() calls work() until it is compiled (the
 * test runs with -Xbatch, so a call that triggers a compilation waits for
 * it), then measured() (excluded from compilation: it stays interpreted and
 * inlines nothing) calls the compiled work() for MS ms. work() calls
 * helper(), which the test has inlined or not; the tier is the test's
 * (-XX:TieredStopAtLevel=1: C1; -XX:-TieredCompilation: C2).</li>
 * <li>{@code sleep MS}: the main thread sleeps MS ms in Thread.sleep, a
 * native method on every JDK (sleep0 from JDK 21).</li>
 * <li>{@code recursive MS}: as {@code compiled}, with rec() calling itself
 * 20 deep (the test keeps it from being inlined into itself) before spin()
 * loops for MS ms: every rec() frame is compiled.</li>
 * </ul>
 */
public class FrameTypes {
    static volatile long sink;
    static final long K = 0x9E3779B97F4A7C15L;

    static long slow(long x, long end) {
        while (System.nanoTime() < end) {
            for (int i = 0; i < 1000; i++) {
                x = (x ^ (x >>> 7)) * K;
            }
        }
        return x;
    }

    static long helper(long x) {
        x = (x ^ (x >>> 7)) * K;
        x = (x ^ (x >>> 7)) * K;
        x = (x ^ (x >>> 7)) * K;
        x = (x ^ (x >>> 7)) * K;
        return x;
    }

    static long work(long x) {
        for (int i = 0; i < 1000; i++) {
            x = (x ^ (x >>> 7)) * K;
            x = helper(x);
        }
        return x;
    }

    static long warm(long x) {
        for (int i = 0; i < 30_000; i++) {
            x = work(x);
        }
        return x;
    }

    static long measured(long x, long end) {
        while (System.nanoTime() < end) {
            x = work(x);
        }
        return x;
    }

    static long spin(long x, long end) {
        while (System.nanoTime() < end) {
            x = (x ^ (x >>> 7)) * K;
        }
        return x;
    }

    static long rec(int n, long x, long end) {
        return n == 0 ? spin(x, end) : rec(n - 1, x, end) + 1;
    }

    static long warmRec(long x) {
        for (int i = 0; i < 20_000; i++) {
            x = rec(20, x, 0);
        }
        return x;
    }

    static long measuredRec(long x, long end) {
        return rec(20, x, end);
    }

    public static void main(String[] args) throws InterruptedException {
        long ms = Long.parseLong(args[1]);
        switch (args[0]) {
            case "interpreted":
                sink = slow(1, System.nanoTime() + ms * 1_000_000L);
                break;
            case "compiled":
                sink = warm(1);
                sink = measured(sink, System.nanoTime() + ms * 1_000_000L);
                break;
            case "recursive":
                sink = warmRec(1);
                sink = measuredRec(sink, System.nanoTime() + ms * 1_000_000L);
                break;
            case "sleep":
                Thread.sleep(ms);
                break;
            default:
                throw new IllegalArgumentException(args[0]);
        }
    }
}
