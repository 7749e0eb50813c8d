package profrj.harness;

import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.List;
import java.util.function.IntPredicate;

/**
 * Branch ground truth. A line holding branching instructions ends with `//@` and one token per
 * instruction in bytecode order, each the times each outcome was taken, worked out by hand from
 * the calls in main: a conditional jump `FELL,JUMPED` (javac jumps when the source's condition
 * is false, so an `if`'s first number is the times its condition held; a `||`'s left operand
 * jumps when true), a switch the default's target first, then each distinct target in key order.
 * A line without `//@` holds no branch. The test (tests/coverage_branches.rs) compares every
 * token of every method's `<branches>` with these.
 */
public class BranchTruth {
    static int sink;
    int kind;

    /** Built 3 times, with k = 0, 1, 2. */
    BranchTruth(int k) {
        if (k > 1) { //@ 1,2
            kind = 2;
        } else {
            kind = 1;
        }
    }

    /** Both outcomes: v = 0..9, above 5 four times. */
    static int both(int v) {
        if (v > 5) { //@ 4,6
            return 1;
        }
        return 0;
    }

    /** One outcome never taken: 3 calls, v never negative. */
    static int never(int v) {
        if (v < 0) { //@ 0,3
            return -1;
        }
        return v;
    }

    /** (1,1) (1,-1) (-1,1) (-1,-1) (2,2). */
    static int andOr(int a, int b) {
        int r = 0;
        if (a > 0 && b > 0) { //@ 3,2 2,1
            r += 1;
        }
        if (a < 0 || b < 0) { //@ 3,2 1,2
            r += 2;
        }
        return r;
    }

    /** v = 1..7: even 3 times. */
    static int ternary(int v) {
        return v % 2 == 0 ? v / 2 : 3 * v + 1; //@ 3,4
    }

    /** n = 4, then 6: the test goes on 10 times and leaves once per call. */
    static int forLoop(int n) {
        int s = 0;
        for (int i = 0; i < n; i++) { //@ 10,2
            s += i;
        }
        return s;
    }

    /** n = 5 (3 turns), then 0 (none). */
    static int whileLoop(int n) {
        int s = 0;
        while (n > 0) { //@ 3,2
            n -= 2;
            s++;
        }
        return s;
    }

    /** A tableswitch: k = 1, 2, 2, 3, 4, 4, 4; keys 1 and 2 share a target; no default. */
    static int table(int k) {
        switch (k) { //@ 0,3,1,3
            case 1:
            case 2:
                return 10;
            case 3:
                return 30;
            case 4:
                return 40;
            default:
                return -1;
        }
    }

    /** A lookupswitch: k = 10, 1000, 1000, 500; keys 10 and 1000 share a target; no default. */
    static int lookup(int k) {
        switch (k) { //@ 0,3,1
            case 10:
            case 1000:
                return 1;
            case 500:
                return 2;
            default:
                return 0;
        }
    }

    /** Cases falling into the next: k = 1, 2, 2, 7 (the default once). */
    static int fallThrough(int k) {
        int s = 0;
        switch (k) { //@ 1,1,2
            case 1:
                s += 1;
            case 2:
                s += 2;
            default:
                s += 100;
        }
        return s;
    }

    /** Both ways to one place: true once, false twice. */
    static void empty(boolean b) {
        if (b) { //@ 1,2
        }
        sink++;
    }

    /** A call in the condition: v = 1, 2, 3, 4, 8: a power of two 4 times. */
    static int called(int v) {
        if (Integer.bitCount(v) == 1) { //@ 4,1
            return 1;
        }
        return 0;
    }

    /** n = 5: the lambda runs for 0..4, true for 3 and 4. */
    static int lambda(int n) {
        IntPredicate big =
                v -> {
                    if (v > 2) { //@ 2,3
                        return true;
                    }
                    return false;
                };
        int c = 0;
        for (int i = 0; i < n; i++) { //@ 5,1
            if (big.test(i)) { //@ 2,3
                c++;
            }
        }
        return c;
    }

    /**
     * v = 10, 50, 0: the division throws once. The finally block is copied: after the try (run
     * twice, r = 10 then 2) and in its handler (once, r = 0).
     */
    static int tryFinally(int v) {
        int r = 0;
        try {
            r = 100 / v;
        } finally {
            if (r > 5) { //@ 1,1 0,1 // JaCoCo: branches (its finally filter merges the copies)
                sink++; // JaCoCo: instructions (its finally filter keeps one copy of two)
            }
        } // JaCoCo: no code (its finally filter drops that jump)
        return r;
    }

    /** i = 0, 5, -1, 7 on 3 elements: the catch runs 3 times, once for a negative index. */
    static int catcher(int[] a, int i) {
        try {
            return a[i];
        } catch (ArrayIndexOutOfBoundsException e) {
            if (i < 0) { //@ 1,2
                return -1;
            }
            return -2;
        }
    }

    /**
     * a = {1, -1, 2}, n = 5: the array load before the branch throws on the last two turns, which
     * the loop catches and goes on.
     */
    static int throwingLoop(int[] a, int n) {
        int hits = 0;
        for (int i = 0; i < n; i++) { //@ 5,1
            try {
                if (a[i] > 0) { //@ 2,1
                    hits++;
                }
            } catch (ArrayIndexOutOfBoundsException e) {
                hits += 100;
            }
        }
        return hits;
    }

    /** d = 1, 0, 5, 0, 2: a division that throws twice between the line's start and its branch. */
    static int divides(int d) {
        try {
            if (10 / d > 3) { //@ 2,1
                return 1;
            }
            return 0;
        } catch (ArithmeticException e) {
            return -1;
        }
    }

    /** A for-each over [3, -1, 4]: its test calls hasNext(), its body starts with next(). */
    static int forEach(List<Integer> list) {
        int s = 0;
        for (int v : list) { //@ 3,1
            s += v;
        }
        return s;
    }

    /**
     * [1, 2, 3], modified on the first turn: the second turn's next() throws between the test's
     * fall-through and the body's first line.
     */
    static int modified(List<Integer> list) {
        int s = 0;
        try {
            for (int v : list) { //@ 2,0
                if (v == 1) { //@ 1,0
                    list.add(9);
                }
                s += v;
            }
        } catch (ConcurrentModificationException e) {
            s = -s;
        }
        return s;
    }

    public static void main(String[] args) {
        for (int k = 0; k < 3; k++) { //@ 3,1
            sink += new BranchTruth(k).kind;
        }
        for (int v = 0; v < 10; v++) { //@ 10,1
            sink += both(v);
        }
        for (int v = 1; v < 4; v++) { //@ 3,1
            sink += never(v);
        }
        sink += andOr(1, 1) + andOr(1, -1) + andOr(-1, 1) + andOr(-1, -1) + andOr(2, 2);
        for (int v = 1; v <= 7; v++) { //@ 7,1
            sink += ternary(v);
        }
        sink += forLoop(4) + forLoop(6);
        sink += whileLoop(5) + whileLoop(0);
        for (int k : new int[] {1, 2, 2, 3, 4, 4, 4}) { //@ 7,1
            sink += table(k);
        }
        for (int k : new int[] {10, 1000, 1000, 500}) { //@ 4,1
            sink += lookup(k);
        }
        for (int k : new int[] {1, 2, 2, 7}) { //@ 4,1
            sink += fallThrough(k);
        }
        empty(true);
        empty(false);
        empty(false);
        for (int v : new int[] {1, 2, 3, 4, 8}) { //@ 5,1
            sink += called(v);
        }
        sink += lambda(5);
        sink += tryFinally(10) + tryFinally(50);
        try {
            sink += tryFinally(0); // JaCoCo: missed (the call throws)
        } catch (ArithmeticException e) {
            sink++;
        }
        int[] three = {1, 2, 3};
        for (int i : new int[] {0, 5, -1, 7}) { //@ 4,1
            sink += catcher(three, i);
        }
        sink += throwingLoop(new int[] {1, -1, 2}, 5);
        for (int d : new int[] {1, 0, 5, 0, 2}) { //@ 5,1
            sink += divides(d);
        }
        sink += forEach(List.of(3, -1, 4));
        sink += modified(new ArrayList<>(List.of(1, 2, 3)));
    }
}
