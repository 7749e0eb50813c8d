package profrj.harness;

import java.util.function.IntUnaryOperator;

/**
 * Ground truth for the profile mode: every call count below is known by
 * construction, and the test asserts them exactly. Runs the same workload on
 * two threads at once ("truth-1", "truth-2") plus a sleeper.
 */
public class ProfileTruth {
    static final int OUTER = 7, INNER = 13;
    static final int FIB_N = 15; // fib(15) makes 2 * fib(16) - 1 = 1973 calls
    static final int DEPTH = 3000;
    static final int THROWS = 10;
    static final int CTORS = 20; // every third throws: i % 3 == 0 -> 7 of 20

    static int sink;

    // Nested loops: outer() 7 times, inner() 7 * 13 = 91 times.
    static void loops() {
        for (int i = 0; i < OUTER; i++) {
            outer(i);
        }
    }

    static void outer(int i) {
        for (int j = 0; j < INNER; j++) {
            inner(i, j);
        }
    }

    static void inner(int i, int j) {
        sink += i * j;
    }

    static int fib(int n) {
        return n < 2 ? n : fib(n - 1) + fib(n - 2);
    }

    // A callee throwing to its caller, THROWS times; the caller catches.
    static void thrower(int i) {
        if (i >= 0) {
            throw new IllegalStateException("boom " + i);
        }
    }

    static void catcher() {
        for (int i = 0; i < THROWS; i++) {
            try {
                thrower(i); // JaCoCo: missed (a line counts only once code after it runs)
            } catch (IllegalStateException e) {
                sink++;
            }
        }
    }

    /** A constructor that throws (after super()) when its argument is a multiple of 3. */
    static final class Picky {
        final int v;

        Picky(int v) {
            if (v % 3 == 0) {
                throw new IllegalArgumentException("multiple of 3: " + v);
            }
            this.v = v;
        }
    }

    static void constructors() {
        for (int i = 0; i < CTORS; i++) {
            try {
                sink += new Picky(i).v;
            } catch (IllegalArgumentException e) {
                sink--;
            }
        }
    }

    static int deep(int n) {
        return n == 0 ? 0 : 1 + deep(n - 1);
    }

    /** Its static initialiser runs once, on first use. */
    static final class Lazy {
        static final int VALUE;

        static {
            VALUE = fib(5) + 1; // 15 fib calls inside <clinit>
        }

        static int value() {
            return VALUE;
        }
    }

    static synchronized void locked() {
        sink++;
    }

    static void lambdas() {
        IntUnaryOperator f = x -> x + 1;
        for (int i = 0; i < 5; i++) {
            sink += f.applyAsInt(i);
        }
    }

    static void nap() throws InterruptedException {
        Thread.sleep(300);
    }

    static void work() {
        loops();
        sink += fib(FIB_N);
        catcher();
        constructors();
        sink += deep(DEPTH);
        for (int i = 0; i < 4; i++) {
            locked();
        }
        lambdas();
    }

    public static void main(String[] args) throws Exception {
        sink += Lazy.value();
        Thread a = new Thread(ProfileTruth::work, "truth-1");
        Thread b = new Thread(ProfileTruth::work, "truth-2");
        Thread s = new Thread(() -> {
            try {
                nap();
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }, "sleeper");
        a.start();
        b.start();
        s.start();
        a.join();
        b.join();
        s.join();
        System.out.println("sink=" + sink);
    }
}
