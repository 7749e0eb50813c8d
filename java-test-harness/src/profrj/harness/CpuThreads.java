package profrj.harness;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * `event=cpu` ground truth: threads "cpu-1", "cpu-2", "cpu-3" burn 300, 600
 * and 900 ms of their own CPU time (read from their own CPU clock), all at
 * once; "idle" sleeps through it. Samples per thread must follow CPU time:
 * 1:2:3, and none for idle.
 */
public class CpuThreads {
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Thread idle = new Thread(() -> CpuSplit.sleepQuietly(1500), "idle");
        idle.start();
        Thread[] ts = new Thread[3];
        for (int i = 0; i < 3; i++) {
            final long budget = 300_000_000L * (i + 1);
            ts[i] = new Thread(() -> {
                long x = budget;
                // The CPU clock read once per 64 spins (~1 ms): a signal
                // is delivered as the thread leaves the kernel, so a read
                // per spin drew the samples of a busy machine's late
                // signals to the read (21% of them, JDK 21 at load 9).
                while (mx.getCurrentThreadCpuTime() < budget) {
                    for (int k = 0; k < 64; k++) {
                        x = BusyThreads.spin(x);
                    }
                }
                sink += x;
            }, "cpu-" + (i + 1));
        }
        for (Thread t : ts) {
            t.start();
        }
        for (Thread t : ts) {
            t.join();
        }
        idle.join();
    }
}
