package profrj.harness;

/**
 * Ground truth for JaCoCo's filters inside a method (tests/coverage_jacoco_xml.rs): code javac
 * generates that JaCoCo's report leaves out of a method it keeps.
 *
 * <ul>
 *   <li>{@code kind}, a {@code switch} on a {@code String}: javac switches on {@code hashCode()},
 *       tests {@code equals} in each bucket ("Aa" and "BB" share one), then switches again on the
 *       case's index; JaCoCo keeps only the second switch: 5 outcomes, 4 taken ("Aa" never).
 *   <li>{@code made} and {@code opened}, try-with-resources: javac closes the resource after the
 *       body (testing it for null where it was not made by {@code new}) and again in a handler
 *       that adds what {@code close} threw as suppressed; JaCoCo leaves out both.
 *   <li>{@code locked}, a {@code synchronized} block: the handler that exits the monitor when the
 *       block throws (never run here); JaCoCo leaves it out.
 * </ul>
 *
 * Its snapshot keeps every instruction and outcome (asserted exactly), marks those JaCoCo leaves
 * out, and {@code convert --to jacoco} then equals JaCoCo's report line by line. Prints 9: kinds
 * 1 + 2 + 4 + 0, made 1 - 1, opened 1 + 0, locked 1.
 */
public class InMethodFilterTruth {
    static final class Resource implements AutoCloseable {
        final boolean fail;

        Resource(boolean fail) {
            this.fail = fail;
        }

        int read() {
            if (fail) {
                throw new IllegalStateException("read");
            }
            return 1;
        }

        @Override
        public void close() {}
    }

    static int kind(String s) {
        switch (s) {
            case "apple":
                return 1;
            case "pear":
                return 2;
            case "Aa":
                return 3;
            case "BB":
                return 4;
            default:
                return 0;
        }
    }

    static int made(boolean fail) {
        try (Resource r = new Resource(fail)) {
            return r.read();
        } catch (IllegalStateException e) {
            return -1;
        }
    }

    static Resource open(boolean fail) {
        return fail ? null : new Resource(false);
    }

    static int opened(boolean none) {
        int n = 0;
        try (Resource r = open(none)) {
            n += r == null ? 0 : r.read();
        }
        return n;
    }

    static final Object LOCK = new Object();

    static int locked(int x) {
        synchronized (LOCK) {
            return x + 1;
        }
    }

    public static void main(String[] args) {
        int sum = kind("apple") + kind("pear") + kind("BB") + kind("cherry");
        sum += made(false) + made(true);
        sum += opened(false) + opened(true);
        sum += locked(0);
        System.out.println(sum);
    }
}
