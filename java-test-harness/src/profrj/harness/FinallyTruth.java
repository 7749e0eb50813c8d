package profrj.harness;

/**
 * Ground truth for JaCoCo's FinallyFilter (tests/coverage_jacoco_xml.rs): javac copies a {@code
 * finally} block to every exit of its {@code try} and {@code catch} blocks and into a catch-all
 * handler; JaCoCo counts the copies as one instruction each, covered where any copy ran, each
 * branch outcome taken where any copy took it, and leaves out the handler's {@code astore},
 * {@code aload}, {@code athrow} and the {@code goto} after each copy.
 *
 * <ul>
 *   <li>{@code plain}: two copies (after the try, in the handler); 5 then 0: each ran once.
 *   <li>{@code exits}: four copies (the return, the end of the try, the end of the catch, the
 *       handler) with a branch in each; 2 takes {@code v == 2} in the return's copy, 1 and 0 (which
 *       divides by zero) the other way in the try's and the catch's: merged, both ways taken; the handler's never ran.
 *   <li>{@code nested}: an inner finally's copies inside an outer try/catch/finally's.
 *   <li>{@code emptyCatch}: javac's copy right after an empty catch's {@code astore}.
 *   <li>{@code looped}: a loop in the finally block (jumps inside each copy).
 *   <li>{@code loopExits}: {@code break} and {@code continue} leave the try through copies.
 *   <li>{@code handlerOnly}: only the handler's copy ever runs (the merged line is covered).
 * </ul>
 *
 * Prints 52: the calls' results, 18 (plain 2 - 1, exits 1 + 0 + 0, nested 2 - 1, emptyCatch 7 +
 * 0, looped 3 + 0, loopExits 6 + 0, handlerOnly -1), and sink, 34 (plain 1 + 1, exits 1 + 9 + 2,
 * nested 4 + 2, emptyCatch 1 + 1, looped 6 + 0, loopExits 5, handlerOnly 1).
 */
public class FinallyTruth {
    static int sink;

    static int plain(int v) {
        int r = 0;
        try {
            r = 10 / v;
        } finally {
            sink++;
        }
        return r;
    }

    static int safePlain(int v) {
        try {
            return plain(v);
        } catch (ArithmeticException e) {
            return -1;
        }
    }

    static int exits(int v) {
        try {
            if (v > 1) {
                return 1;
            }
            sink += 10 / v;
        } catch (ArithmeticException e) {
            sink += 3;
        } finally {
            if (v == 2) {
                sink++;
            } else {
                sink--;
            }
        }
        return 0;
    }

    static int nested(int v) {
        int r = 0;
        try {
            try {
                r = 6 / v;
            } finally {
                sink += r;
            }
        } catch (ArithmeticException e) {
            r = -1;
        } finally {
            sink += 2;
        }
        return r;
    }

    static int emptyCatch(String s) {
        int n = 0;
        try {
            n = Integer.parseInt(s);
        } catch (NumberFormatException e) {
        } finally {
            sink++;
        }
        return n;
    }

    static int looped(int n) {
        try {
            sink += n;
        } finally {
            for (int i = 0; i < n; i++) {
                sink++;
            }
        }
        return n;
    }

    static int loopExits(int[] xs) {
        int t = 0;
        for (int x : xs) {
            try {
                if (x < 0) {
                    break;
                }
                if (x == 0) {
                    continue;
                }
                t += x;
            } finally {
                sink++;
            }
        }
        return t;
    }

    static int handlerOnly(int v) {
        try {
            try {
                if (v == 0) {
                    throw new ArithmeticException("zero");
                }
                sink += v;
            } finally {
                sink++;
            }
        } catch (ArithmeticException e) {
            return -1;
        }
        return 0;
    }

    public static void main(String[] args) {
        int total = 0;
        total += safePlain(5) + safePlain(0);
        total += exits(2) + exits(1) + exits(0);
        total += nested(3) + nested(0);
        total += emptyCatch("7") + emptyCatch("x");
        total += looped(3) + looped(0);
        total += loopExits(new int[] {1, 0, 2, 3, -1, 9}) + loopExits(new int[0]);
        total += handlerOnly(0);
        System.out.println(total + sink);
    }
}
