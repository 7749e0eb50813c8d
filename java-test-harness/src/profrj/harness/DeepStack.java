package profrj.harness;

/**
 * Recurses `depth` frames deep (argument 1, default 100) and spins there for
 * `millis` (argument 2, default 1000): exercises the sampler's depth limit.
 */
public class DeepStack {
    static volatile long sink;

    static void recurse(int n, long endNanos) {
        if (n == 0) {
            while (System.nanoTime() < endNanos) {
                sink += CpuSplit.unit(sink);
            }
        } else {
            recurse(n - 1, endNanos);
        }
    }

    public static void main(String[] args) {
        int depth = args.length > 0 ? Integer.parseInt(args[0]) : 100;
        long millis = args.length > 1 ? Long.parseLong(args[1]) : 1000;
        recurse(depth, System.nanoTime() + millis * 1_000_000L);
        System.out.println("done");
    }
}
