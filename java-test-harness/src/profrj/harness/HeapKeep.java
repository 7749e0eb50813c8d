package profrj.harness;

/**
 * A heap whose content is known by construction, for {@code profrj convert --to hprof} of a
 * binary heap dump: exactly 1000 {@link Link}s alive, each but the first referring to the one
 * made before it ({@code next}), ten {@code int[7]}, a 48 MiB {@code byte[]} (a dump too large
 * to hold in the converter's memory) and an {@code Object[]} of 100000 elements, every tenth
 * one a Link. Prints "ready", then stays until its standard input gives a line or ends, so a
 * test can dump it with {@code jcmd PID GC.heap_dump}.
 */
public class HeapKeep {
    /** An object with one reference field and one int. */
    static final class Link {
        final Link next;
        final int payload;

        Link(Link next, int payload) {
            this.next = next;
            this.payload = payload;
        }
    }

    static Link head;
    static int[][] sevens;
    static byte[] big;
    static Object[] wide;

    public static void main(String[] args) throws Exception {
        Link[] all = new Link[1000];
        Link last = null;
        for (int i = 0; i < all.length; i++) {
            last = new Link(last, i);
            all[i] = last;
        }
        head = last;
        sevens = new int[10][];
        for (int i = 0; i < sevens.length; i++) {
            sevens[i] = new int[7];
            sevens[i][0] = i;
        }
        big = new byte[48 << 20];
        wide = new Object[100_000];
        for (int i = 0; i < wide.length; i += 10) {
            wide[i] = all[i / 100];
        }
        all = null;
        System.out.println("ready");
        System.out.flush();
        System.in.read();
        System.out.println(head.payload + sevens.length + big.length + wide.length);
    }
}
