package profrj.harness;

import java.io.File;
import java.util.ArrayList;
import java.util.List;

/**
 * Ground truth for following virtual threads only while a mode needs it
 * (JDK 21+): the same work in three phases, between which the test stops
 * and starts the agent's session ({@code profrj attach PID stop}, then a
 * new start), while other virtual threads switch throughout.
 *
 * <p>{@code VirtualPhases N DIR}: starts {@link #SPANNERS} virtual threads
 * named {@code spanner-K} that call {@link VirtualTruth#work()} (sleep 1 ms,
 * so they unmount, then compute) until the end: at every stop and start of
 * the session some are mounted, some in the middle of a call. Then for each
 * phase {@code A}, {@code B}, {@code C}: main runs {@link VirtualTruth#work()}
 * once, N unnamed virtual threads run one {@link VirtualTruth.Task} each
 * (all joined), and main prints the phase's letter and waits until the file
 * {@code DIR/go-LETTER} exists (at most 5 minutes) before the next phase.
 * After C the spanners end; prints {@code ok}. Virtual threads through
 * reflection: the harness compiles for Java 11.
 */
public class VirtualPhases {
    static final int SPANNERS = 4;
    static volatile boolean done;

    /** Works, waiting 1 ms at each call, until {@link #done}. */
    static final class Spanner implements Runnable {
        public void run() {
            while (!done) {
                VirtualTruth.work();
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        File dir = new File(args[1]);
        List<Thread> spanners = new ArrayList<>();
        for (int k = 0; k < SPANNERS; k++) {
            spanners.add(VirtualTruth.startVirtual("spanner-" + k, new Spanner()));
        }
        for (String phase : new String[] {"A", "B", "C"}) {
            VirtualTruth.work();
            List<Thread> tasks = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                tasks.add(VirtualTruth.startVirtual(null, new VirtualTruth.Task()));
            }
            for (Thread t : tasks) {
                t.join();
            }
            if (phase.equals("C")) {
                break;
            }
            System.out.println(phase);
            System.out.flush();
            File go = new File(dir, "go-" + phase);
            for (int i = 0; i < 30_000 && !go.exists(); i++) {
                Thread.sleep(10);
            }
        }
        done = true;
        for (Thread t : spanners) {
            t.join();
        }
        System.out.println("ok");
    }
}
