package profrj.harness;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * JDK 21+ benchmark of virtual-thread switching: 10,000 virtual threads each
 * yield 100 times (about 2 million mount/unmount transitions). Two rounds;
 * prints the second round's time in ms. Reached by reflection (compiles for 11).
 */
public class VirtualSwitch {
    public static void main(String[] args) throws Exception {
        for (int round = 0; round < 2; round++) {
            long t = System.nanoTime();
            ExecutorService ex =
                    (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
            for (int i = 0; i < 10_000; i++) {
                ex.submit(() -> {
                    for (int k = 0; k < 100; k++) {
                        Thread.yield();
                    }
                });
            }
            ex.shutdown();
            ex.awaitTermination(1, TimeUnit.MINUTES);
            if (round == 1) {
                System.out.println((System.nanoTime() - t) / 1_000_000);
            }
        }
    }
}
