package profrj.harness;

import java.util.ArrayList;
import java.util.List;

/**
 * alloc ground truth: what each allocation site allocates is known by construction
 * (tests/alloc.rs asserts it within the sampling tolerance).
 *
 * <ul>
 *   <li>{@code bigSite} makes {@code ROUNDS} {@code byte[6000]} (6,016 bytes each with a 16-byte
 *       array header), {@code smallSite} as many {@code byte[2000]} (2,016 bytes): 74.9% and 25.1%
 *       of their bytes, half of the objects each;
 *   <li>with the argument {@code live}, {@code keptSite} also makes {@code KEPT} {@code byte[1000]}
 *       that stay reachable to the end (a static list), while the two sites above make garbage;
 *   <li>with {@code until FILE}, it prints "ready" and runs rounds of the two sites until FILE
 *       exists (a target for attach).
 * </ul>
 *
 * Every array is stored in a static field, so the compilers cannot prove it unused and drop the
 * allocation (escape analysis).
 */
public class AllocSites {
    static final int ROUNDS = 200_000;
    static final int KEPT = 40_000;
    static volatile Object sink;
    static final List<byte[]> kept = new ArrayList<>();

    static void bigSite() {
        sink = new byte[6000];
    }

    static void smallSite() {
        sink = new byte[2000];
    }

    static void keptSite() {
        kept.add(new byte[1000]);
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("until")) {
            java.nio.file.Path stop = java.nio.file.Paths.get(args[1]);
            System.out.println("ready");
            System.out.flush();
            while (!java.nio.file.Files.exists(stop)) {
                for (int i = 0; i < 10_000; i++) {
                    bigSite();
                    smallSite();
                }
            }
            return;
        }
        boolean live = args.length > 0 && args[0].equals("live");
        int keptEvery = ROUNDS / KEPT;
        for (int i = 0; i < ROUNDS; i++) {
            bigSite();
            smallSite();
            if (live && i % keptEvery == 0) {
                keptSite();
            }
        }
        System.out.println("bytes big " + (long) ROUNDS * 6016 + " small " + (long) ROUNDS * 2016
                + " kept " + kept.size());
    }
}
