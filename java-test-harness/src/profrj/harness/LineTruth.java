package profrj.harness;

/**
 * Line-number ground truth. main() calls spin() once, from the line marked
 * LINE-CALL; spin() spends its whole time in a loop written on the one line
 * marked LINE-SPIN (condition and body). So with `lines`, spin()'s samples
 * are on LINE-SPIN and main()'s frame on LINE-CALL; the test reads the line
 * numbers from this file. Argument: milliseconds to spin (default 2000).
 */
public class LineTruth {
    static volatile long sink;

    static long spin(long end) {
        long x = 1;
        while (System.nanoTime() < end) for (int i = 0; i < 1000; i++) x = x * 0x9E3779B97F4A7C15L + i; // LINE-SPIN
        return x;
    }

    public static void main(String[] args) {
        long ms = args.length > 0 ? Long.parseLong(args[0]) : 2000;
        sink = spin(System.nanoTime() + ms * 1_000_000L); // LINE-CALL
    }
}
