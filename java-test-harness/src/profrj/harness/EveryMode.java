package profrj.harness;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * A target for the attach rotation test (tests/attach/modes.rs), with something for every mode: prints
 * "ready", then, until the file named by argument 1 exists,
 *
 * <ul>
 *   <li>main runs CpuSplit's heavy()/light() rounds (sampling, profile, coverage, trace), keeps the
 *       last 64 {@code Kept} objects it made (memory) and makes a 64 KB {@code byte[]} per round,
 *       keeping the last 16 (alloc, alloc with live);
 *   <li>two threads, "contender-0" and "contender-1", take turns holding one {@code Gate} monitor
 *       for 1 ms at a time (lock).
 * </ul>
 */
public class EveryMode {
    static final class Kept {
        final long[] data = new long[4];
    }

    static final class Gate {}

    static final Gate GATE = new Gate();
    static final byte[][] blocks = new byte[16][];
    static volatile boolean stop;
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        Path stopFile = Paths.get(args[0]);
        Thread[] contenders = new Thread[2];
        for (int i = 0; i < contenders.length; i++) {
            contenders[i] = new Thread(EveryMode::contend, "contender-" + i);
            contenders[i].start();
        }
        Kept[] kept = new Kept[64];
        System.out.println("ready");
        System.out.flush();
        for (int n = 0; !Files.exists(stopFile); n++) {
            round(kept, n);
        }
        stop = true;
        for (Thread t : contenders) {
            t.join();
        }
        System.out.println("done");
    }

    /**
     * One round of main's work, in a method of its own: a class retransformed by a late attach
     * changes the next call of a method, never one running (main's loop).
     */
    static void round(Kept[] kept, int n) {
        for (int i = 0; i < 5; i++) {
            CpuSplit.heavy();
            CpuSplit.light();
        }
        kept[n & 63] = new Kept();
        blocks[n & 15] = new byte[64 * 1024];
    }

    static void contend() {
        while (!stop) {
            synchronized (GATE) {
                long end = System.nanoTime() + 1_000_000L;
                while (System.nanoTime() < end) {
                    sink++;
                }
            }
        }
    }
}
