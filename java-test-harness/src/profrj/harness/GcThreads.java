package profrj.harness;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * `jvmthreads` ground truth: the GC workers' CPU time, measured by the
 * program itself from the kernel. Run with -XX:+UseParallelGC
 * -XX:ParallelGCThreads=2 -XX:-UseDynamicNumberOfGCThreads (both workers
 * made at start, "GC Thread#0" and "#1", or "ParGC Thread#0" and "#1" on
 * JDK 11) and the
 * agent's event=cpu.
 *
 * A first System.gc() runs the workers; with args[1] = "timers", the
 * program then waits until /proc/self/timers lists a timer notifying each
 * worker (the agent's CPU timer on it, so no CPU of theirs from then on
 * goes unsampled). It reads
 * their CPU (/proc/self/task/TID/schedstat, ns), churns a 40 MB live set of
 * 2 KB arrays (args[0] replacements at random places: young collections
 * copy survivors, old collections come as old arrays die), reads their CPU
 * again and prints:
 *   gc-threads N TID,TID      the workers found (the same at both reads)
 *   gc-cpu-ns X               their CPU between the two reads, summed
 */
public class GcThreads {
    static final int LIVE = 20_000;
    /** Parallel GC's workers: "ParGC Thread#N" on JDK 11, "GC Thread#N" from 17. */
    static final String[] WORKERS = {"GC Thread#", "ParGC Thread#"};
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        long rounds = Long.parseLong(args[0]);
        System.gc();
        List<Integer> gc = tidsNamed(WORKERS);
        if (gc.isEmpty()) {
            System.out.println("no Parallel GC workers");
            System.exit(2);
        }
        if (args.length > 1 && args[1].equals("timers")) {
            waitForTimers(gc);
        }
        long before = cpu(gc);
        churn(rounds);
        long after = cpu(gc);
        List<Integer> end = tidsNamed(WORKERS);
        if (!end.equals(gc)) {
            System.out.println("workers changed: " + gc + " then " + end);
            System.exit(2);
        }
        StringBuilder ids = new StringBuilder();
        for (int t : gc) {
            ids.append(ids.length() == 0 ? "" : ",").append(t);
        }
        System.out.println("gc-threads " + gc.size() + " " + ids);
        System.out.println("gc-cpu-ns " + (after - before));
    }

    static void churn(long rounds) {
        byte[][] live = new byte[LIVE][];
        Random r = new Random(42);
        long x = 0;
        for (long i = 0; i < rounds; i++) {
            byte[] b = new byte[2048];
            b[(int) (i & 2047)] = (byte) i;
            live[r.nextInt(LIVE)] = b;
            x += b.length;
        }
        for (byte[] b : live) {
            x += b == null ? 0 : b[0];
        }
        sink = x;
    }

    /** This process's threads whose OS name starts with one of `prefixes`, by id. */
    static List<Integer> tidsNamed(String[] prefixes) throws IOException {
        List<Integer> out = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(Paths.get("/proc/self/task"))) {
            for (Path p : ds) {
                String name;
                try {
                    name = new String(Files.readAllBytes(p.resolve("comm")), StandardCharsets.UTF_8).trim();
                } catch (IOException gone) {
                    continue;
                }
                for (String prefix : prefixes) {
                    if (name.startsWith(prefix)) {
                        out.add(Integer.parseInt(p.getFileName().toString()));
                    }
                }
            }
        }
        out.sort(null);
        return out;
    }

    /** Waits until a POSIX timer notifies each of `tids` (the agent's CPU timers). */
    static void waitForTimers(List<Integer> tids) throws Exception {
        for (int k = 0; ; k++) {
            String timers = new String(Files.readAllBytes(Paths.get("/proc/self/timers")), StandardCharsets.UTF_8);
            boolean all = true;
            for (int t : tids) {
                // "notify: signal/tid.1234" for a timer that signals one thread.
                all &= timers.contains("/tid." + t + "\n");
            }
            if (all) {
                return;
            }
            if (k == 6000) {
                System.out.println("no CPU timer on the GC workers after 60 s: " + timers);
                System.exit(2);
            }
            Thread.sleep(10);
        }
    }

    /** The summed CPU time of `tids`, ns (schedstat's first field: time on a CPU). */
    static long cpu(List<Integer> tids) throws IOException {
        long sum = 0;
        for (int t : tids) {
            String s = new String(Files.readAllBytes(Paths.get("/proc/self/task/" + t + "/schedstat")), StandardCharsets.UTF_8);
            sum += Long.parseLong(s.trim().split(" ")[0]);
        }
        return sum;
    }
}
