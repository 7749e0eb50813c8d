package profrj.harness;

import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A deliberate two-thread deadlock (tests/lock.rs): {@code deadlock-a} holds a {@code First} and
 * wants a {@code Second}, {@code deadlock-b} holds the {@code Second} and wants the {@code First}.
 * Once both are BLOCKED it prints "deadlocked" and waits for the file named by its last argument,
 * if any, to exist; the two threads are daemons, so the JVM can still exit. With the first
 * argument {@code reentrant}, the same on two ReentrantLocks (both threads then WAITING).
 */
public class Deadlock {
    static final class First {}

    static final class Second {}

    static final First FIRST = new First();
    static final Second SECOND = new Second();
    static final ReentrantLock ONE = new ReentrantLock();
    static final ReentrantLock TWO = new ReentrantLock();

    static void oneThenTwo() {
        ONE.lock();
        try {
            sleep(100);
            TWO.lock();
            TWO.unlock();
        } finally {
            ONE.unlock();
        }
    }

    static void twoThenOne() {
        TWO.lock();
        try {
            sleep(100);
            ONE.lock();
            ONE.unlock();
        } finally {
            TWO.unlock();
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new RuntimeException(e);
        }
    }

    static void aThenB() {
        synchronized (FIRST) {
            sleep(100);
            synchronized (SECOND) {
                sleep(1);
            }
        }
    }

    static void bThenA() {
        synchronized (SECOND) {
            sleep(100);
            synchronized (FIRST) {
                sleep(1);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        boolean reentrant = args.length > 0 && args[0].equals("reentrant");
        Thread a = new Thread(reentrant ? Deadlock::oneThenTwo : Deadlock::aThenB, "deadlock-a");
        Thread b = new Thread(reentrant ? Deadlock::twoThenOne : Deadlock::bThenA, "deadlock-b");
        Thread.State stuck = reentrant ? Thread.State.WAITING : Thread.State.BLOCKED;
        int first = reentrant ? 1 : 0;
        String stop = args.length > first ? args[args.length - 1] : null;
        a.setDaemon(true);
        b.setDaemon(true);
        a.start();
        b.start();
        while (a.getState() != stuck || b.getState() != stuck) {
            Thread.sleep(10);
        }
        System.out.println("deadlocked");
        System.out.flush();
        while (stop != null && !Files.exists(Paths.get(stop))) {
            Thread.sleep(20);
        }
    }
}
