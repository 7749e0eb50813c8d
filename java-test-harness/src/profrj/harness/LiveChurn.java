package profrj.harness;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.SplittableRandom;

/**
 * A live set of exactly N objects under churn (issue 43): fills an array with N (argument 2)
 * objects of one kind (argument 1: {@code bytes}, a {@code byte[16]} each, followed by weak
 * references; {@code items}, this program's own {@link Item}, stamped), prints "ready", then
 * replaces random slots, each replacement making one object and dropping the one it replaces,
 * until the file named by argument 3 exists; then prints "replaced=R" and exits.
 *
 * <p>Known by construction: at every instant main holds exactly N objects of the kind in the
 * array, plus at most one just made and not yet stored: N or N + 1 alive, whatever the GCs do.
 * Everything is made by main, so main's row of the kind counts them all.
 */
public class LiveChurn {
    static final class Item {
        final long v;

        Item(long v) {
            this.v = v;
        }
    }

    public static void main(String[] args) throws Exception {
        boolean bytes = args[0].equals("bytes");
        int n = Integer.parseInt(args[1]);
        Path stop = Paths.get(args[2]);
        Object[] live = new Object[n];
        for (int i = 0; i < n; i++) {
            live[i] = bytes ? (Object) new byte[16] : new Item(i);
        }
        System.out.println("ready");
        System.out.flush();
        SplittableRandom random = new SplittableRandom(43);
        long replaced = 0;
        while (true) {
            for (int k = 0; k < 100_000; k++) {
                int i = random.nextInt(n);
                live[i] = bytes ? (Object) new byte[16] : new Item(replaced + k);
            }
            replaced += 100_000;
            if (Files.exists(stop)) {
                break;
            }
        }
        System.out.println("replaced=" + replaced + " kept=" + live.length);
    }
}
