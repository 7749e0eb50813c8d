package profrj.harness;

/**
 * Runs out of heap (tests/heap_readers/variants.rs, heapdumps=oom): a chain of {@code Chunk}s, each
 * made at {@code SITE chunk} and holding a {@code long[512]}, grows until the heap is full; the
 * OutOfMemoryError is caught (the chain let go first), the count of chunks made printed, and the
 * program ends normally. The dump the agent writes at the error holds every chunk of the chain.
 */
public class HeapOom {
    static final class Chunk {
        final long[] data = new long[512];
        Chunk next;
    }

    static Chunk head;

    public static void main(String[] args) {
        long made = 0;
        try {
            while (true) {
                Chunk c = new Chunk(); // SITE chunk
                c.next = head;
                head = c;
                made++;
            }
        } catch (OutOfMemoryError e) {
            head = null;
            System.out.println("made " + made);
        }
    }
}
