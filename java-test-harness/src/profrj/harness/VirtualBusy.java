package profrj.harness;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * JDK 21+: two virtual threads each burn CPU in busy() for `millis` (argument 1,
 * default 1500). Reached by reflection, so the harness still compiles for 11.
 */
public class VirtualBusy {
    static volatile long sink;

    static void busy(long millis) {
        long end = System.nanoTime() + millis * 1_000_000L;
        while (System.nanoTime() < end) {
            sink += CpuSplit.unit(sink);
        }
    }

    public static void main(String[] args) throws Exception {
        long millis = args.length > 0 ? Long.parseLong(args[0]) : 1500;
        ExecutorService ex = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        for (int i = 0; i < 2; i++) {
            ex.submit(() -> busy(millis));
        }
        ex.shutdown();
        ex.awaitTermination(1, TimeUnit.MINUTES);
        System.out.println("done");
    }
}
