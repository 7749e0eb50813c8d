package profrj.harness;

import java.nio.file.Files;
import java.nio.file.Paths;

/**
 * A deliberate two-thread deadlock (tests/lock.rs): {@code deadlock-a} holds a {@code First} and
 * wants a {@code Second}, {@code deadlock-b} holds the {@code Second} and wants the {@code First}.
 * Once both are BLOCKED it prints "deadlocked" and waits for the file named by its argument to
 * exist; the two threads are daemons, so the JVM can still exit.
 */
public class Deadlock {
    static final class First {}

    static final class Second {}

    static final First FIRST = new First();
    static final Second SECOND = new Second();

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
        Thread a = new Thread(Deadlock::aThenB, "deadlock-a");
        Thread b = new Thread(Deadlock::bThenA, "deadlock-b");
        a.setDaemon(true);
        b.setDaemon(true);
        a.start();
        b.start();
        while (a.getState() != Thread.State.BLOCKED || b.getState() != Thread.State.BLOCKED) {
            Thread.sleep(10);
        }
        System.out.println("deadlocked");
        System.out.flush();
        while (args.length > 0 && !Files.exists(Paths.get(args[0]))) {
            Thread.sleep(20);
        }
    }
}
