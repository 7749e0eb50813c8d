package profrj.harness;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * JDK 21+ benchmark of virtual-thread switching: 10,000 virtual threads each
 * yield 100 times (about 2 million mount/unmount transitions). Two rounds;
 * prints the second round's wall time in ms and the CPU time the whole
 * process spent during it, in ms. With the argument {@code pause}, prints
 * {@code paused} after the first round and reads a line from stdin before
 * the second (time for a script to stop the agent's session in between).
 * Reached by reflection (compiles for 11).
 */
public class VirtualSwitch {
    public static void main(String[] args) throws Exception {
        boolean pause = args.length > 0 && args[0].equals("pause");
        for (int round = 0; round < 2; round++) {
            if (round == 1 && pause) {
                System.out.println("paused");
                System.out.flush();
                new BufferedReader(new InputStreamReader(System.in)).readLine();
            }
            long cpu = processCpuNanos();
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
                long wallMs = (System.nanoTime() - t) / 1_000_000;
                long cpuMs = (processCpuNanos() - cpu) / 1_000_000;
                System.out.println(wallMs + " " + cpuMs);
            }
        }
    }

    /** The CPU time of the whole process so far (user + system). */
    static long processCpuNanos() {
        return ProcessHandle.current().info().totalCpuDuration().orElse(Duration.ZERO).toNanos();
    }
}
