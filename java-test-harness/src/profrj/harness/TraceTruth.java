package profrj.harness;

import java.io.File;

/**
 * Ground truth for the trace mode: every call and every exception below is known by
 * construction. {@code truth}: the workload on two threads ("trace-1", "trace-2"), then a GC.
 * {@code many N}: N calls of {@code leaf} on the main thread (2 N events). {@code rotate FILE}:
 * phase one, then waits until FILE exists (the test's dump ends the first trace file), then
 * phase two; {@code rotate FILE STOP}: then prints "phase two done" and waits until STOP exists
 * before it ends (the test stops the trace meanwhile).
 */
public class TraceTruth {
    static final int LEAVES = 100, CAUGHT = 5, DIVIDES = 3, ESCAPES = 2;
    static final int ARRAYS = 10, OBJECTS = 5;

    static int sink;
    static volatile Object last;

    /** A monitor of a class of its own, for the lock elements. */
    static final class Gate {}

    static final Gate GATE = new Gate();
    static volatile boolean held;

    /** ARRAYS byte arrays and OBJECTS plain objects, each garbage at once. */
    static void makes() {
        for (int i = 0; i < ARRAYS; i++) {
            last = new byte[16];
        }
        for (int i = 0; i < OBJECTS; i++) {
            last = new Object();
        }
        last = null;
    }

    static void holdGate() {
        synchronized (GATE) {
            held = true;
            try {
                Thread.sleep(300);
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }
    }

    /** Blocks on GATE while "holder" holds it: one contended monitor entry. */
    static void contend() throws InterruptedException {
        Thread holder = new Thread(TraceTruth::holdGate, "holder");
        holder.start();
        while (!held) {
            Thread.sleep(5);
        }
        synchronized (GATE) {
            sink++;
        }
        holder.join();
    }

    static void leaf(int i) {
        sink += i;
    }

    static void middle(int n) {
        for (int i = 0; i < n; i++) {
            leaf(i);
        }
    }

    /** Throws (an athrow in scope). */
    static void thrower(int i) {
        throw new IllegalStateException("boom");
    }

    static void catcher() {
        for (int i = 0; i < CAUGHT; i++) {
            try {
                thrower(i);
            } catch (IllegalStateException e) {
                sink++;
            }
        }
    }

    /** The VM raises an ArithmeticException here (no athrow). */
    static int divide(int a, int b) {
        return a / b;
    }

    static void vmThrows() {
        for (int i = 0; i < DIVIDES; i++) {
            try {
                sink += divide(1, 0);
            } catch (ArithmeticException e) {
                sink++;
            }
        }
    }

    /** Lets thrower's exception pass through. */
    static void escapes() {
        thrower(-1);
    }

    static void catcher2() {
        for (int i = 0; i < ESCAPES; i++) {
            try {
                escapes();
            } catch (IllegalStateException e) {
                sink++;
            }
        }
    }

    /** A finally block: javac's catch-any handler catches, then rethrows the same object. */
    static void finallyRethrows() {
        try {
            thrower(0);
        } finally {
            sink++;
        }
    }

    static void work() {
        makes();
        middle(LEAVES);
        catcher();
        vmThrows();
        catcher2();
        try {
            finallyRethrows();
        } catch (IllegalStateException e) {
            sink++;
        }
    }

    static void phaseTwo() {
        middle(LEAVES);
    }

    public static void main(String[] args) throws Exception {
        String what = args.length > 0 ? args[0] : "truth";
        if (what.equals("many")) {
            long n = Long.parseLong(args[1]);
            for (long i = 0; i < n; i++) {
                leaf((int) i);
            }
        } else if (what.equals("rotate")) {
            work();
            System.out.println("phase one done");
            System.out.flush();
            // The waits are in main itself: a dump finds main's call open, and no other.
            File f = new File(args[1]);
            long deadline = System.currentTimeMillis() + 60_000;
            while (!f.exists() && System.currentTimeMillis() < deadline) {
                Thread.sleep(20);
            }
            phaseTwo();
            if (args.length > 2) {
                System.out.println("phase two done");
                System.out.flush();
                File g = new File(args[2]);
                deadline = System.currentTimeMillis() + 60_000;
                while (!g.exists() && System.currentTimeMillis() < deadline) {
                    Thread.sleep(20);
                }
            }
        } else {
            Thread a = new Thread(TraceTruth::work, "trace-1");
            Thread b = new Thread(TraceTruth::work, "trace-2");
            a.start();
            b.start();
            a.join();
            b.join();
            contend();
            System.gc();
            // Time for the memory mode's agent thread to find the dead objects.
            Thread.sleep(500);
        }
        System.out.println("sink=" + sink);
    }
}
