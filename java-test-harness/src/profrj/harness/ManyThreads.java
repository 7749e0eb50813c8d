package profrj.harness;

/**
 * Starts N threads (argument 1, default 300) named "many-0".."many-N-1" that each
 * sleep 500 ms and end: the sampler must list every one, under -Xcheck:jni.
 */
public class ManyThreads {
    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 300;
        Thread[] ts = new Thread[n];
        for (int i = 0; i < n; i++) {
            ts[i] = new Thread(() -> CpuSplit.sleepQuietly(500), "many-" + i);
            ts[i].start();
        }
        for (Thread t : ts) {
            t.join();
        }
        System.out.println("joined " + n);
    }
}
