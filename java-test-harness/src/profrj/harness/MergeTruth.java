package profrj.harness;

/**
 * Ground truth for `profrj merge`: run with one argument n (a JVM per n), each line runs a
 * number of times that is a function of n, named by the marker comment (M:NAME) at its end;
 * tests/merge.rs holds the functions and asserts that the merged snapshot of several runs
 * has, on every marked line, exactly the sum over the runs. A call tree too: work() calls
 * step() n times on the main thread.
 */
public class MergeTruth {
    static long sink;

    public static void main(String[] args) {
        int n = Integer.parseInt(args[0]); // M:once
        long s = work(n); // M:once
        if (n > 5) { // M:once
            sink += big(s); // M:big
        } else {
            sink += small(s); // M:small
        }
        sink += s; // M:once
    } // M:once

    static long work(int n) {
        long s = 0; // M:once
        for (int i = 0; i < n; i++) { // M:header
            s += step(i); // M:n
        }
        return s; // M:once
    }

    static int step(int i) {
        if (i % 3 == 0) { // M:n
            return 1; // M:third
        }
        return 2; // M:rest
    }

    static long big(long s) {
        return s * 2; // M:big
    }

    static long small(long s) {
        return s + 1; // M:small
    }

    static void never() {
        sink++; // M:never
    } // M:never
}
