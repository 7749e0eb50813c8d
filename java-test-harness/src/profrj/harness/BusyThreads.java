package profrj.harness;

import java.net.InetAddress;
import java.net.ServerSocket;

/**
 * Sampler ground truth under load. By construction:
 * - N threads "busy-0".."busy-N-1" (argument 1, default 16) each burn CPU
 *   without pause for MS milliseconds of wall time (argument 2, default 3000),
 *   all at once: with more threads than cores, each thread is runnable the
 *   whole time and on a CPU only part of it. Each prints the nanoseconds it
 *   lived, so a test knows how many samples its lifetime calls for;
 * - "acceptor" (daemon) waits in ServerSocket.accept() the whole run: Java
 *   calls it RUNNABLE, but it never runs, so it must earn no hit. With
 *   -Dbusy.dump, the program asks for a snapshot (SIGUSR1) once the
 *   acceptor waits, before the load starts.
 */
public class BusyThreads {
    static volatile long sink;

    /** Pure CPU work (xorshift; no allocation, no calls). */
    static long spin(long x) {
        for (int i = 0; i < 10_000; i++) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
        }
        return x;
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 16;
        long ms = args.length > 1 ? Long.parseLong(args[1]) : 3000;
        ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(() -> {
            try {
                server.accept();
            } catch (Exception e) {
                // closed at exit
            }
        }, "acceptor");
        acceptor.setDaemon(true);
        acceptor.start();
        Thread.sleep(300); // the acceptor is in accept() before the load starts
        if (System.getProperty("busy.dump") != null) {
            // A snapshot now (the agent's dump signal), so a test can compare
            // what the waiting acceptor earns from here on.
            new ProcessBuilder("kill", "-USR1", Long.toString(ProcessHandle.current().pid()))
                .inheritIO().start().waitFor();
            Thread.sleep(300);
        }
        long[] lived = new long[n];
        Thread[] ts = new Thread[n];
        for (int i = 0; i < n; i++) {
            final int k = i;
            ts[i] = new Thread(() -> {
                long start = System.nanoTime();
                long end = start + ms * 1_000_000L;
                long x = k + 1;
                while (System.nanoTime() < end) {
                    x = spin(x);
                }
                sink += x;
                lived[k] = System.nanoTime() - start;
            }, "busy-" + i);
        }
        for (Thread t : ts) {
            t.start();
        }
        for (Thread t : ts) {
            t.join();
        }
        for (int i = 0; i < n; i++) {
            System.out.println("busy-" + i + " lived-ns=" + lived[i]);
        }
    }
}
