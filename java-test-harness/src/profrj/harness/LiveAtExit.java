package profrj.harness;

/**
 * alloc,live ground truth at VM exit (tests/alloc.rs): main keeps {@code BLOCKS} blocks of {@code
 * SIZE} bytes in a local array, and nothing else, to its last line; then it returns, and at VM
 * exit every block is garbage (main's frame is gone), though the program held them all to its end.
 * With the argument {@code gc}, main runs a GC while it holds them ({@code System.gc()}): the last
 * GC before exit sees every block alive. What main makes after it (its last line's string, and the
 * linkage of that concatenation) is garbage by exit.
 */
public class LiveAtExit {
    static final int BLOCKS = 500, SIZE = 100_000;

    public static void main(String[] args) {
        byte[][] kept = new byte[BLOCKS][];
        for (int i = 0; i < BLOCKS; i++) {
            kept[i] = new byte[SIZE];
            kept[i][0] = (byte) i;
        }
        if (args.length > 0 && args[0].equals("gc")) {
            System.gc();
        }
        long sum = 0;
        for (byte[] b : kept) {
            sum += b[0];
        }
        System.out.println("kept " + kept.length + " blocks of " + SIZE + " bytes, sum " + sum);
    }
}
