package profrj.harness;

import java.util.ArrayList;
import java.util.List;

/**
 * Defined by {@link NamelessDefine} with a null name, and never loaded by its own name. Each {@code
 * work(n)} keeps one {@code long[8]} and adds 0..n.
 */
public class NamelessTarget {
    static final List<long[]> kept = new ArrayList<>();

    public static int work(int n) {
        kept.add(new long[8]);
        int sum = 0;
        for (int i = 0; i <= n; i++) {
            sum += i;
        }
        return sum;
    }
}
