package profrj.harness;

/**
 * A heap to dump (scripts/heapdump-bench): N {@code Node}s (a class of the
 * application: stamped under {@code memory}) each holding a {@code byte[]}
 * of a given length (an array: followed by weak reference), 2N objects in
 * all, kept alive in one array. Prints "ready" once built, then waits until
 * the file named by argument 2 exists (the bench's dumps run meanwhile),
 * with one thread allocating short-lived garbage so the heap is not idle.
 *
 * <pre>HeapDumpBench NODES PAYLOAD_BYTES STOP_FILE</pre>
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
