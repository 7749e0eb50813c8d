package profrj.harness;

/**
 * A heap to dump (scripts/heapdump-bench): N {@code Node}s (a class of the
 * application: stamped under {@code memory}) each holding a {@code byte[]}
 * of a given length (an array: followed by weak reference), 2N objects in
 * all, kept alive in one array. Prints "ready" once built, then waits until
 * the file named by argument 2 exists (the bench's dumps run meanwhile),
 * with one thread allocating short-lived garbage so the heap is not idle.
 *
 * <p>With a fourth argument {@code shuffled}, the {@code next} links form one
 * chain in a random order (seeded) instead of the order of creation, so a
 * reader following them jumps across the whole dump (the heap keeps the
 * Nodes in the array's order): the worst case for a reader's locality.
 *
 * <pre>HeapDumpBench NODES PAYLOAD_BYTES STOP_FILE [shuffled]</pre>
 */
public final class HeapDumpBench {
    static final class Node {
        long id;
        int hash;
        Node next;
        byte[] payload;
    }

    static Node[] all;
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        int payload = Integer.parseInt(args[1]);
        java.io.File stop = new java.io.File(args[2]);
        all = new Node[n];
        Node prev = null;
        for (int i = 0; i < n; i++) {
            Node x = new Node();
            x.id = i;
            x.hash = i * 31;
            x.next = prev;
            x.payload = new byte[payload];
            all[i] = x;
            prev = x;
        }
        if (args.length > 3 && args[3].equals("shuffled")) {
            int[] order = new int[n];
            for (int i = 0; i < n; i++) {
                order[i] = i;
            }
            java.util.Random random = new java.util.Random(39);
            for (int i = n - 1; i > 0; i--) {
                int j = random.nextInt(i + 1);
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
            for (int i = 0; i < n; i++) {
                all[order[i]].next = i + 1 < n ? all[order[i + 1]] : null;
            }
        }
        Thread churn = new Thread(() -> {
            while (true) {
                StringBuilder b = new StringBuilder();
                for (int i = 0; i < 100; i++) {
                    b.append(i);
                }
                sink += b.length();
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "churn");
        churn.setDaemon(true);
        churn.start();
        System.out.println("ready");
        System.out.flush();
        while (!stop.exists()) {
            Thread.sleep(50);
        }
        sink += all.length;
    }
}
