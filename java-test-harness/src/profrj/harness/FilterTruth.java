package profrj.harness;

import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.util.function.Supplier;

/**
 * Ground truth for the methods JaCoCo's report leaves out (tests/coverage_jacoco_xml.rs): javac
 * generates them, and JaCoCo's filters drop them whether they ran or not.
 *
 * <ul>
 *   <li>{@code Color}, an enum: its {@code values()} (called here) and {@code valueOf(String)}
 *       (not called), its private empty constructor and the synthetic {@code $values()};
 *   <li>{@code Util}: a private empty no-argument constructor, never called;
 *   <li>{@code Named}: {@code compareTo(Named)} and the bridge {@code compareTo(Object)}
 *       javac adds, called through {@code Comparable};
 *   <li>a lambda, whose synthetic body JaCoCo keeps (counted, run once);
 *   <li>{@code Gen.made}, annotated {@code @Generated} (an annotation of that simple name, kept in
 *       the class file, not at run time), and every method of {@code AllGen}, a class so
 *       annotated (AnnotationGeneratedFilter): both called, both left out.
 * </ul>
 *
 * Prints 6: ordinals 0 + 1, "lambda".length() 6, twice(3) 6, "a".compareTo("b") -1, made() 5,
 * one() 1, less 12.
 */
public class FilterTruth {
    enum Color {
        RED,
        GREEN
    }

    static final class Util {
        private Util() {}

        static int twice(int x) {
            return 2 * x;
        }
    }

    static final class Named implements Comparable<Named> {
        final String n;

        Named(String n) {
            this.n = n;
        }

        @Override
        public int compareTo(Named o) {
            return n.compareTo(o.n);
        }
    }

    @Retention(RetentionPolicy.CLASS)
    @interface Generated {}

    static final class Gen {
        @Generated
        static int made() {
            return 5;
        }
    }

    @Generated
    static final class AllGen {
        static int one() {
            return 1;
        }
    }

    public static void main(String[] args) {
        int sum = 0;
        for (Color c : Color.values()) {
            sum += c.ordinal();
        }
        Supplier<String> s = () -> "lambda";
        sum += s.get().length();
        sum += Util.twice(3);
        Comparable<Named> a = new Named("a");
        sum += a.compareTo(new Named("b"));
        sum += Gen.made() + AllGen.one();
        System.out.println(sum - 12);
    }
}
