package profrj.harness;

/**
 * Recurses until StackOverflowError, catches it, and starts again, for
 * `millis` (argument 1, default 2000): the worst case for a signal that
 * lands near the end of a thread's stack. Prints "overflows=N" (N > 0).
 */
public class StackOverflowLoop {
    static int depth;

    static void recurse() {
        depth++;
        recurse();
    }

    public static void main(String[] args) {
        long millis = args.length > 0 ? Long.parseLong(args[0]) : 2000;
        long end = System.nanoTime() + millis * 1_000_000L;
        int n = 0;
        while (System.nanoTime() < end) {
            depth = 0;
            try {
                recurse();
            } catch (StackOverflowError e) {
                n++;
            }
        }
        System.out.println("overflows=" + (n > 0 ? "some" : "none"));
    }
}
