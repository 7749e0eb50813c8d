package profrj.harness;

/**
 * lock ground truth (tests/lock.rs): {@code THREADS} threads contend on two monitors, each held
 * {@code HOLD_MS} ms at a time, and each thread measures its own wait with {@code System.nanoTime}
 * around the entry.
 *
 * <ul>
 *   <li>{@code siteA} enters a {@code synchronized} block on a {@code Gate}, {@code siteB} calls a
 *       {@code synchronized} method of a {@code Shared}; each prints, summed over the threads, the
 *       nanoseconds waited, the acquisitions and the waits longer than 200 µs (those were
 *       contended for certain): {@code siteA waitNs=… acquisitions=… longWaits=…};
 *   <li>{@code lonely} enters a monitor of its own ({@code Lonely}) no other thread wants, many
 *       times: it must not show;
 *   <li>a waiter thread sits in {@code Object.wait} on a {@code Cond} that a notifier thread
 *       notifies while holding it for {@code HOLD_MS} ms, so each wake-up must wait to re-enter:
 *       that is waiting for a condition, not contention, and must not show either;
 *   <li>with {@code reentrant}, the same two sites run on a {@code ReentrantLock} instead
 *       ({@code lockA}, {@code lockB}), and the waiter and notifier use a {@code Condition}
 *       ({@code awaitLoop}, {@code signalLoop});
 *   <li>{@code main} waits for the contenders with a {@code CountDownLatch}: waiting for an
 *       event, not for a lock;
 *   <li>with {@code until FILE}, it prints "ready" and threads contend at {@code siteA} and
 *       {@code lockA} until FILE exists (a target for attach).
 * </ul>
 */
public class LockContention {
    static final int THREADS = 4;
    static final int ROUNDS = 40;
    static final long HOLD_MS = 1;
    static final long LONG_NS = 200_000;

    static final class Gate {}

    static final class Lonely {}

    static final class Cond {}

    static final class Shared {
        synchronized long hold(long t0) throws InterruptedException {
            long waited = System.nanoTime() - t0;
            Thread.sleep(HOLD_MS);
            return waited;
        }
    }

    static final Gate GATE = new Gate();
    static final Shared SHARED = new Shared();
    static final Cond COND = new Cond();
    static final java.util.concurrent.locks.ReentrantLock LOCK_A =
            new java.util.concurrent.locks.ReentrantLock();
    static final java.util.concurrent.locks.ReentrantLock LOCK_B =
            new java.util.concurrent.locks.ReentrantLock();
    static final java.util.concurrent.locks.ReentrantLock LOCK_C =
            new java.util.concurrent.locks.ReentrantLock();
    static final java.util.concurrent.locks.Condition SIGNAL = LOCK_C.newCondition();

    /** Per site: [waitNs, acquisitions, longWaits], summed over threads. */
    static final long[][] totals = new long[2][3];

    static final java.util.concurrent.atomic.AtomicInteger ARRIVED =
            new java.util.concurrent.atomic.AtomicInteger();
    static volatile long sink;
    static volatile boolean done;

    static void record(int site, long waited) {
        synchronized (totals) {
            totals[site][0] += waited;
            totals[site][1]++;
            if (waited > LONG_NS) totals[site][2]++;
        }
    }

    static void siteA() throws InterruptedException {
        long t0 = System.nanoTime();
        synchronized (GATE) {
            long waited = System.nanoTime() - t0;
            Thread.sleep(HOLD_MS);
            record(0, waited);
        }
    }

    static void siteB() throws InterruptedException {
        record(1, SHARED.hold(System.nanoTime()));
    }

    static void lockA() throws InterruptedException {
        long t0 = System.nanoTime();
        LOCK_A.lock();
        try {
            long waited = System.nanoTime() - t0;
            Thread.sleep(HOLD_MS);
            record(0, waited);
        } finally {
            LOCK_A.unlock();
        }
    }

    static void lockB() throws InterruptedException {
        long t0 = System.nanoTime();
        LOCK_B.lock();
        try {
            long waited = System.nanoTime() - t0;
            Thread.sleep(HOLD_MS);
            record(1, waited);
        } finally {
            LOCK_B.unlock();
        }
    }

    /**
     * A target for attach: prints "ready", then THREADS threads contend at siteA and lockA until
     * stop exists.
     */
    static void until(java.nio.file.Path stop) throws Exception {
        Thread[] ts = new Thread[THREADS];
        for (int i = 0; i < THREADS; i++) {
            ts[i] = new Thread(() -> {
                try {
                    while (!java.nio.file.Files.exists(stop)) {
                        siteA();
                        lockA();
                    }
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }, "contender-" + i);
            ts[i].start();
        }
        System.out.println("ready");
        System.out.flush();
        for (Thread t : ts) t.join();
    }

    static void lonely() {
        Lonely mine = new Lonely();
        for (int i = 0; i < 100_000; i++) {
            synchronized (mine) {
                sink += i;
            }
        }
    }

    static void waitLoop() throws InterruptedException {
        synchronized (COND) {
            while (!done) {
                COND.wait(50);
            }
        }
    }

    static void awaitLoop() throws InterruptedException {
        LOCK_C.lock();
        try {
            while (!done) {
                SIGNAL.await(50, java.util.concurrent.TimeUnit.MILLISECONDS);
            }
        } finally {
            LOCK_C.unlock();
        }
    }

    static void signalLoop() throws InterruptedException {
        while (!done) {
            LOCK_C.lock();
            try {
                SIGNAL.signalAll();
                Thread.sleep(HOLD_MS);
            } finally {
                LOCK_C.unlock();
            }
            Thread.sleep(HOLD_MS);
        }
    }

    static void notifyLoop() throws InterruptedException {
        while (!done) {
            synchronized (COND) {
                COND.notifyAll();
                Thread.sleep(HOLD_MS);
            }
            Thread.sleep(HOLD_MS);
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("until")) {
            until(java.nio.file.Paths.get(args[1]));
            return;
        }
        boolean reentrant = args.length > 0 && args[0].equals("reentrant");
        lonely();
        Thread waiter = new Thread(() -> {
            try {
                if (reentrant) awaitLoop(); else waitLoop();
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }, "waiter");
        waiter.start();
        // The waiter takes COND (or LOCK_C) first, uncontended, then waits in it.
        while (waiter.getState() != Thread.State.TIMED_WAITING) {
            Thread.sleep(1);
        }
        Thread notifier = new Thread(() -> {
            try {
                if (reentrant) signalLoop(); else notifyLoop();
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }, "notifier");
        notifier.start();
        Thread[] ts = new Thread[THREADS];
        java.util.concurrent.CountDownLatch finished = new java.util.concurrent.CountDownLatch(THREADS);
        for (int i = 0; i < THREADS; i++) {
            ts[i] = new Thread(() -> {
                try {
                    // All of one site, then all of the other: every thread waits at both.
                    for (int r = 0; r < ROUNDS; r++) {
                        if (reentrant) lockA(); else siteA();
                    }
                    // Everyone at the second site at once (sleeping, not parking: no lock).
                    ARRIVED.incrementAndGet();
                    while (ARRIVED.get() < THREADS) Thread.sleep(1);
                    for (int r = 0; r < ROUNDS; r++) {
                        if (reentrant) lockB(); else siteB();
                    }
                    lonely();
                    finished.countDown();
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            }, "contender-" + i);
            ts[i].start();
        }
        // Waiting for an event (an AQS, not a lock): must not show either.
        finished.await();
        for (Thread t : ts) t.join();
        done = true;
        waiter.join();
        notifier.join();
        String[] names = reentrant ? new String[] {"lockA", "lockB"} : new String[] {"siteA", "siteB"};
        for (int s = 0; s < 2; s++) {
            System.out.println(names[s] + " waitNs=" + totals[s][0] + " acquisitions=" + totals[s][1]
                    + " longWaits=" + totals[s][2]);
        }
    }
}
