package profrj.harness;

/**
 * The OTLP push's ground truth (tests/otlp.rs): two phases, each longer than the push's period
 * apart, so that each lands in periods of its own.
 *
 * <ul>
 *   <li>phase A: {@code phaseA()} is called {@code A_CALLS} times, each allocating a {@code
 *       byte[4096]}, while two threads contend for a {@code Gate} monitor ({@code contend()});
 *   <li>then main sleeps {@code GAP_MS} (argument 1, default 2500);
 *   <li>phase B: {@code phaseB()} is called {@code B_CALLS} times, each allocating a {@code
 *       long[512]};
 *   <li>then main sleeps {@code GAP_MS} again and prints {@code done a=… b=…} (the calls made).
 * </ul>
 *
 * With {@code run MS} instead, it repeats both phases until MS milliseconds passed (a target for
 * the collector failure tests) and prints the same line with the totals; {@code run MS ready}
 * prints "ready" first (a target to attach to).
 */
public class OtlpPhases {
    static final int A_CALLS = 1000;
    static final int B_CALLS = 2000;

    static final class Gate {}

    static final Gate GATE = new Gate();
    static volatile Object sink;
    static long a, b;

    static void phaseA() {
        sink = new byte[4096];
        a++;
    }

    static void phaseB() {
        sink = new long[512];
        b++;
    }

    static void contend() throws InterruptedException {
        synchronized (GATE) {
            Thread.sleep(20);
        }
    }

    static void runA() throws InterruptedException {
        Thread[] ts = new Thread[2];
        for (int t = 0; t < ts.length; t++) {
            ts[t] =
                    new Thread(
                            () -> {
                                try {
                                    for (int i = 0; i < 5; i++) {
                                        contend();
                                    }
                                } catch (InterruptedException e) {
                                    throw new RuntimeException(e);
                                }
                            },
                            "contender-" + t);
            ts[t].start();
        }
        for (int i = 0; i < A_CALLS; i++) {
            phaseA();
        }
        for (Thread t : ts) {
            t.join();
        }
    }

    static void runB() {
        for (int i = 0; i < B_CALLS; i++) {
            phaseB();
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length >= 2 && args[0].equals("run")) {
            if (args.length == 3) {
                System.out.println("ready");
            }
            long end = System.nanoTime() + Long.parseLong(args[1]) * 1_000_000L;
            while (System.nanoTime() < end) {
                runA();
                runB();
                Thread.sleep(100);
            }
        } else {
            long gap = args.length > 0 ? Long.parseLong(args[0]) : 2500;
            runA();
            Thread.sleep(gap);
            runB();
            Thread.sleep(gap);
        }
        System.out.println("done a=" + a + " b=" + b);
    }
}
