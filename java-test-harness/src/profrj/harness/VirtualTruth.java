package profrj.harness;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Ground truth for virtual threads in the instrumenting modes (JDK 21+):
 * calls that wait, so that a virtual thread unmounts in the middle of
 * them and resumes on any carrier. Everything has a known count.
 *
 * <p>{@code VirtualTruth N M} runs N unnamed virtual threads (the group
 * {@code [virtual threads]}) and M named {@code worker-0} .. (the group
 * {@code worker-#}) at once, each running one {@link Task}:
 * <ul>
 * <li>{@code task()} calls {@code work()} 10 times; {@code work()} sleeps
 *     1 ms (the virtual thread unmounts) then runs {@code compute()};
 * <li>{@code nested()}: {@code level1() → level2() → level3()}, each
 *     sleeping 1 ms before its call (waits at three depths);
 * <li>{@code thrower()} catches what {@code fail()} throws after sleeping
 *     1 ms (an exception thrown after a remount);
 * <li>{@code pinned()} sleeps 1 ms inside {@code synchronized} on its own
 *     object: the virtual thread pins its carrier on JDK 21 and unmounts
 *     on JDK 24+;
 * <li>{@code allocate()} makes {@link #PAYLOADS} {@link Payload}s, all kept
 *     to the end.
 * </ul>
 * Then, one at a time, {@link #ROUNDS} virtual threads named
 * {@code locker-R} wait for a monitor main holds (blocked: pinned on JDK
 * 21, unmounted on 24+) and {@link #ROUNDS} named {@code parker-R} for a
 * {@link ReentrantLock} main holds (parked: the virtual thread unmounts),
 * main letting go 30 ms after each one waits. Main itself runs
 * {@code platformWork()}: {@code work()} 5 times, and {@code allocate()}.
 *
 * <p>{@code VirtualTruth N M GO_FILE} first prints {@code ready} and waits
 * until GO_FILE exists (at most 5 minutes: time to attach the agent, however
 * slow a loaded machine makes that). Prints {@code ok} at the end.
 * Virtual threads through reflection: the harness compiles for Java 11.
 */
public class VirtualTruth {
    static final int WORK_CALLS = 10;
    static final int PAYLOADS = 3;
    static final int ROUNDS = 3;
    static final int PLATFORM_WORK_CALLS = 5;

    static final Object GATE = new Object();
    static final ReentrantLock LOCK = new ReentrantLock();
    static final List<Object> KEPT = new ArrayList<>();
    static volatile long sink;

    /** An object to count: made by allocate() only. */
    static final class Payload {
        final long[] data = new long[2];
    }

    /** One virtual thread's whole run. */
    static final class Task implements Runnable {
        public void run() {
            task();
        }
    }

    /** Waits for the monitor of GATE. */
    static final class Locker implements Runnable {
        public void run() {
            enterGate();
        }
    }

    /** Waits for LOCK. */
    static final class Parker implements Runnable {
        public void run() {
            takeLock();
        }
    }

    static void task() {
        for (int i = 0; i < WORK_CALLS; i++) {
            work();
        }
        nested();
        thrower();
        pinned();
        allocate();
    }

    static void work() {
        sleep();
        compute();
    }

    /** About 20 µs of arithmetic, no allocation, no wait. */
    static void compute() {
        long s = sink;
        for (int i = 0; i < 20_000; i++) {
            s = s * 6364136223846793005L + 1442695040888963407L;
        }
        sink = s;
    }

    static void nested() {
        level1();
    }

    static void level1() {
        sleep();
        level2();
    }

    static void level2() {
        sleep();
        level3();
    }

    static void level3() {
        sleep();
    }

    static void thrower() {
        try {
            fail();
        } catch (IllegalStateException expected) {
            sink++;
        }
    }

    static void fail() {
        sleep();
        throw new IllegalStateException("after a wait");
    }

    static void pinned() {
        Object own = new Object();
        synchronized (own) {
            sleep();
        }
    }

    static void allocate() {
        Object[] made = new Object[PAYLOADS];
        for (int i = 0; i < PAYLOADS; i++) {
            made[i] = new Payload();
        }
        synchronized (KEPT) {
            for (Object o : made) {
                KEPT.add(o);
            }
        }
    }

    static void enterGate() {
        synchronized (GATE) {
            sink++;
        }
    }

    static void takeLock() {
        LOCK.lock();
        try {
            sink++;
        } finally {
            LOCK.unlock();
        }
    }

    static void platformWork() {
        for (int i = 0; i < PLATFORM_WORK_CALLS; i++) {
            work();
        }
        allocate();
    }

    static void sleep() {
        try {
            Thread.sleep(1);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Starts a virtual thread (unnamed when `name` is null). */
    static Thread startVirtual(String name, Runnable r) throws Exception {
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        Class<?> b = Class.forName("java.lang.Thread$Builder");
        if (name != null) {
            builder = b.getMethod("name", String.class).invoke(builder, name);
        }
        return (Thread) b.getMethod("start", Runnable.class).invoke(builder, r);
    }

    /** Waits until `t` is in `state`. */
    static void awaitState(Thread t, Thread.State state) throws InterruptedException {
        while (t.getState() != state) {
            Thread.sleep(1);
        }
    }

    public static void main(String[] args) throws Exception {
        int unnamed = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int named = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        if (args.length > 2) {
            System.out.println("ready");
            System.out.flush();
            java.io.File go = new java.io.File(args[2]);
            for (int i = 0; i < 30_000 && !go.exists(); i++) {
                Thread.sleep(10);
            }
        }
        platformWork();
        List<Thread> all = new ArrayList<>();
        for (int i = 0; i < unnamed; i++) {
            all.add(startVirtual(null, new Task()));
        }
        for (int i = 0; i < named; i++) {
            all.add(startVirtual("worker-" + i, new Task()));
        }
        for (Thread t : all) {
            t.join();
        }
        for (int r = 0; r < ROUNDS; r++) {
            Thread t;
            synchronized (GATE) {
                t = startVirtual("locker-" + r, new Locker());
                awaitState(t, Thread.State.BLOCKED);
                Thread.sleep(30);
            }
            t.join();
        }
        for (int r = 0; r < ROUNDS; r++) {
            Thread t;
            LOCK.lock();
            try {
                t = startVirtual("parker-" + r, new Parker());
                while (!LOCK.hasQueuedThread(t)) {
                    Thread.sleep(1);
                }
                awaitState(t, Thread.State.WAITING);
                Thread.sleep(30);
            } finally {
                LOCK.unlock();
            }
            t.join();
        }
        System.out.println("ok " + KEPT.size());
    }
}
