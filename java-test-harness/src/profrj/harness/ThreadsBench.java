package profrj.harness;

import java.util.concurrent.CountDownLatch;

/**
 * Coverage benchmark at several threads (scripts/coverage-bench --threads): each thread runs the
 * same mixed work whose hot lines are the program's own — a recursion (fib), small constructors
 * (a two-field point made and read in a loop) and a plain loop with a branch — so every thread
 * runs the same lines. Arguments: rounds per thread, threads. Each thread warms up with the same
 * rounds, then all start the timed rounds together; prints "bench-ms=N", the wall time of the
 * timed rounds of all threads. Time per thread stays the same at any thread count where the
 * machine has the cores and nothing is shared.
 */
public class ThreadsBench {
    static volatile long sink;

    static final class Point {
        final int x;
        final int y;

        Point(int x, int y) {
            this.x = x;
            this.y = y;
        }

        int dot(Point o) {
            return x * o.x + y * o.y;
        }
    }

    static int fib(int n) {
        if (n < 2) {
            return n;
        }
        return fib(n - 1) + fib(n - 2);
    }

    static long points(int n) {
        long s = 0;
        Point prev = new Point(1, 2);
        for (int i = 0; i < n; i++) {
            Point p = new Point(i, i ^ 5);
            s += p.dot(prev);
            prev = p;
        }
        return s;
    }

    static long loop(int n) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            if ((i & 3) == 0) {
                s += i;
            } else {
                s ^= i;
            }
        }
        return s;
    }

    static long round(int r) {
        return fib(20 + (r & 1)) + points(20_000) + loop(50_000);
    }

    static void work(int rounds) {
        long s = 0;
        for (int r = 0; r < rounds; r++) {
            s += round(r);
        }
        sink += s;
    }

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        int threads = Integer.parseInt(args[1]);
        CountDownLatch warm = new CountDownLatch(threads);
        CountDownLatch go = new CountDownLatch(1);
        Thread[] all = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            all[t] =
                    new Thread(
                            () -> {
                                work(rounds);
                                warm.countDown();
                                try {
                                    go.await();
                                } catch (InterruptedException e) {
                                    return;
                                }
                                work(rounds);
                            });
            all[t].start();
        }
        warm.await();
        long t0 = System.nanoTime();
        go.countDown();
        for (Thread t : all) {
            t.join();
        }
        System.out.println("bench-ms=" + (System.nanoTime() - t0) / 1_000_000);
    }
}
