package profrj.harness;

/**
 * Call-heavy benchmark for the profile mode's per-call cost
 * (scripts/profile-bench): naive recursive Fibonacci, whose call count is
 * known in closed form. Arguments: n, repetitions. Prints "calls=N",
 * "bench-ms=N" and "bench-cpu-us=N", the thread's CPU time (the timed
 * repetitions only, after a warm-up; CPU time is what a loaded machine
 * disturbs least).
 */
public class CallBench {
    static volatile long sink;

    static int fib(int n) {
        return n < 2 ? n : fib(n - 1) + fib(n - 2);
    }

    /** Calls fib(n) makes: 2 * fib(n + 1) - 1. */
    static long calls(int n) {
        long a = 0, b = 1;
        for (int i = 0; i < n + 1; i++) {
            long t = a + b;
            a = b;
            b = t;
        }
        return 2 * a - 1;
    }

    public static void main(String[] args) {
        int n = Integer.parseInt(args[0]);
        int reps = Integer.parseInt(args[1]);
        for (int i = 0; i < 3; i++) {
            sink += fib(n);
        }
        java.lang.management.ThreadMXBean mx =
                java.lang.management.ManagementFactory.getThreadMXBean();
        long cpu = mx.getCurrentThreadCpuTime();
        long t = System.nanoTime();
        for (int i = 0; i < reps; i++) {
            sink += fib(n);
        }
        long ms = (System.nanoTime() - t) / 1_000_000;
        long cpuUs = (mx.getCurrentThreadCpuTime() - cpu) / 1_000;
        System.out.println("calls=" + calls(n) * reps);
        System.out.println("bench-ms=" + ms);
        System.out.println("bench-cpu-us=" + cpuUs);
    }
}
