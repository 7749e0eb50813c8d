package profrj.harness;

import java.util.concurrent.atomic.AtomicLong;

/**
 * An application that handles SIGPROF itself (sun.misc.Signal), as a native
 * profiling library might. With "late" (argument 1), it installs its handler
 * after 500 ms of work, while the agent samples with that signal; with
 * "early" before anything else. It then works MS milliseconds (argument 2,
 * default 3000) and prints "prof-handled=N": how often its handler ran. An
 * agent that went on signalling would make N thousands.
 */
public class OwnsProf {
    static volatile long sink;

    static void work(long ms) {
        long end = System.nanoTime() + ms * 1_000_000L;
        long x = 1;
        while (System.nanoTime() < end) {
            x = BusyThreads.spin(x);
        }
        sink += x;
    }

    public static void main(String[] args) throws Exception {
        boolean late = args.length > 0 && args[0].equals("late");
        long ms = args.length > 1 ? Long.parseLong(args[1]) : 3000;
        AtomicLong handled = new AtomicLong();
        if (late) {
            work(500);
        }
        sun.misc.Signal.handle(new sun.misc.Signal("PROF"), s -> handled.incrementAndGet());
        System.out.println("ready");
        System.out.flush();
        work(ms);
        Thread.sleep(200); // let the Signal Dispatcher run pending handlers
        System.out.println("prof-handled=" + handled.get());
    }
}
