package profrj.harness;

import java.util.function.IntUnaryOperator;

/**
 * Coverage ground truth. Every line inside a method body ends with the number of times it
 * runs, as a `//= N` comment (N from the counts in main, worked out by hand; `name=N` after
 * it gives another method sharing the line, e.g. a lambda body, its own count); a line without
 * one holds no code and must show -1. Lines count once per arrival at their code: a `for`
 * header counts its initialisation and each increment, a `while` header each test. The test
 * (tests/coverage.rs) reads these comments and compares every footprint.
 */
public class CoverageTruth {
    static final String H_IDLE = "profrj.harness.CoverageTruth$Idle";
    static int sink;
    int field;

    static {
        sink = 3; //= 1
    } //= 1

    CoverageTruth(int x) { //= 2
        // a comment line inside the constructor

        field = x; //= 2
    } //= 2

    /** Runs its loop body n times per call; called 3 times with n = 1000. */
    static long loop(int n) {
        long sum = 0; //= 3
        for (int i = 0; i < n; i++) { //= 3003
            sum += i; //= 3000
        }
        return sum; //= 3
    }

    /** A while loop: its test runs n + 1 times; called twice with n = 10. */
    static int countDown(int n) {
        int steps = 0; //= 2
        while (n > 0) { //= 22
            n--; //= 20
            steps++; //= 20
        }
        return steps; //= 2
    }

    /** Its first instruction is also the loop's: called twice with n = 3. */
    static int spin(int n) {
        while (n > 0) { //= 8
            n--; //= 6
        }
        return n; //= 2
    }

    /** A branch never taken: called 4 times with a positive value. */
    static int sign(int v) {
        if (v < 0) { //= 4
            // never: v is always positive here
            return -1; //= 0
        }

        return 1; //= 4
    }

    /** Never called. */
    static void neverCalled() {
        sink++; //= 0
    } //= 0

    /** A switch: called with 0, 1, 1, 2, 7 (5 calls). */
    static int pick(int k) {
        switch (k) { //= 5
            case 0:
                return 10; //= 1
            case 1:
                sink += 1; //= 2
                break; //= 2
            case 2:
                sink += 2; //= 1
                // falls through
            default:
                sink += 5; //= 2
        }
        return k; //= 4
    }

    /** try/catch/finally: javac copies the finally block; each run takes one copy. */
    static int guarded(boolean fail) {
        int r = 0; //= 3
        try {
            if (fail) { //= 3
                throw new IllegalStateException("fail"); //= 1
            }
            r = 1; //= 2
        } catch (IllegalStateException e) { //= 1
            r = 2; //= 1
        } finally {
            sink += r; //= 3 // JaCoCo: instructions (its finally filter keeps one copy of three)
            // javac puts the jump out of each finally copy on the closing brace
        } //= 3 // JaCoCo: no code (its finally filter drops that jump)
        return r; //= 3
    }

    // Lines whose counts the agent derives from other counters, through code that can throw
    // (tests/coverage.rs runs this class with and without derivation). Each throws once.

    /** Called with ({1, 2, 3}, 2), then ({1, 2, 3}, 5), which runs past the end (caught here). */
    static int sumUpTo(int[] a, int steps) {
        int s = 0; //= 2
        try {
            for (int i = 0; i < steps; i++) { //= 7
                s += a[i]; //= 6
            }
        } catch (ArrayIndexOutOfBoundsException e) { //= 1
            s = -s; //= 1
        } //= 1 // javac puts the try block's jump past the handler here
        return s; //= 2
    }

    /** A loop whose test reads the array: called with {5, 0}, then {7, 8} (past the end). */
    static int leading(int[] a) {
        int i = 0; //= 2
        try {
            while (a[i] != 0) { //= 5
                i++; //= 3
            }
        } catch (ArrayIndexOutOfBoundsException e) { //= 1
            i = -i; //= 1
        } //= 1
        return i; //= 2
    }

    /** A test that divides: called with 4, 2 and 0 (ArithmeticException, caught by main). */
    static int halves(int d) {
        int n = 0; //= 3
        if (8 / d > 3) { //= 3
            n = 1; //= 1
        }
        return n; //= 2
    }

    /** Called with an array, then null (NullPointerException, caught by main). */
    static int doubledLength(int[] a) {
        int x = a.length; //= 2
        x = x * 2; //= 1
        return x; //= 1
    }

    /** Loaded by main but never initialised: listed in the snapshot with zeros. */
    static class Idle { //= 0
        static int unused() {
            return 42; //= 0
        }
    }

    /** An interface's default method (counters in interfaces too). */
    interface Greeter {
        default int greet(int n) {
            return n + 1; //= 2
        }
    }

    static final class Hello implements Greeter {} //= 2

    public static void main(String[] args) throws Exception {
        Class.forName(H_IDLE, false, CoverageTruth.class.getClassLoader()); //= 1
        long total = 0; //= 1
        for (int i = 0; i < 3; i++) { //= 4
            total += loop(1000); //= 3
        }
        total += countDown(10) + countDown(10); //= 1
        total += spin(3) + spin(3); //= 1
        for (int v = 1; v <= 4; v++) { //= 5
            total += sign(v); //= 4
        }
        int[] picks = {0, 1, 1, 2, 7}; //= 1
        for (int k : picks) { //= 6
            total += pick(k); //= 5
        }
        total += guarded(false) + guarded(true) + guarded(false); //= 1
        IntUnaryOperator twice = x -> x * 2; //= 1 lambda$main$0=5
        for (int i = 0; i < 5; i++) { //= 6
            total += twice.applyAsInt(i); //= 5
        }
        total += new CoverageTruth(4).field + new CoverageTruth(5).field; //= 1
        total += new Hello().greet(1) + new Hello().greet(2); //= 1
        total += sumUpTo(new int[] {1, 2, 3}, 2) + sumUpTo(new int[] {1, 2, 3}, 5); //= 1
        total += leading(new int[] {5, 0}) + leading(new int[] {7, 8}); //= 1
        total += halves(4) + halves(2) + doubledLength(new int[3]); //= 1
        try {
            total += doubledLength(null); //= 1 // JaCoCo: missed (the call throws)
        } catch (NullPointerException e) { //= 1
            total++; //= 1
        } //= 0 // the jump past the handler, never taken
        try {
            total += halves(0); //= 1 // JaCoCo: missed (the call throws)
        } catch (ArithmeticException e) { //= 1
            total++; //= 1
        } //= 0
        System.out.println("total " + total); //= 1
    } //= 1
}
