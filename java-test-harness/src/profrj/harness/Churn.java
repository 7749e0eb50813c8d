package profrj.harness;

import java.io.InputStream;
import java.lang.instrument.ClassDefinition;
import java.lang.instrument.Instrumentation;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Churn for a stack sampler to walk through: compiled code thrown away and
 * rebuilt all the time, threads starting and ending, class redefinition.
 * - Four workers run hot loops through stubs (array copies, interface and
 *   virtual calls) and a call site whose receiver class keeps changing.
 * - Every 20 ms a new subclass of {@link Shape} is defined in a class loader
 *   of its own (the same bytes, a new class): the type profiles and the
 *   class-hierarchy assumptions compiled code relies on break, so it is
 *   deoptimised and compiled again.
 * - Every 20 ms, when started as an executable jar whose manifest names this
 *   class as Launcher-Agent-Class (scripts/sampling-stress builds one),
 *   {@link Hot} is redefined with its own bytes: every compiled method that
 *   depends on it is deoptimised.
 * - A starter thread keeps starting short threads (each a few hundred
 *   microseconds of work) for the whole run.
 * Arguments: milliseconds to run (default 5000). Prints the counts at the end.
 */
public class Churn {
    static volatile Instrumentation instrumentation;
    static volatile boolean stop;
    static final AtomicLong threadsRun = new AtomicLong();
    static volatile long sink;

    public static void agentmain(String args, Instrumentation inst) {
        instrumentation = inst;
    }

    public abstract static class Shape {
        public abstract long area(long x);
    }

    public static class Square extends Shape {
        public long area(long x) {
            return x * x + 1;
        }
    }

    /** Redefined over and over; its methods are inlined into the workers. */
    public static class Hot {
        static long mix(long x) {
            return (x ^ (x >>> 7)) * 0x9E3779B97F4A7C15L;
        }
    }

    /** Defines Square again, in a loader of its own: a new class each time. */
    static final class Fresh extends ClassLoader {
        private final byte[] bytes;

        Fresh(byte[] bytes) {
            super(Churn.class.getClassLoader());
            this.bytes = bytes;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (name.equals(Square.class.getName())) {
                synchronized (this) {
                    Class<?> c = findLoadedClass(name);
                    return c != null ? c : defineClass(name, bytes, 0, bytes.length);
                }
            }
            return super.loadClass(name, resolve);
        }
    }

    static byte[] bytesOf(Class<?> c) throws Exception {
        String path = c.getName().replace('.', '/') + ".class";
        try (InputStream in = Churn.class.getClassLoader().getResourceAsStream(path)) {
            return in.readAllBytes();
        }
    }

    static volatile Shape[] shapes = {new Square()};

    static long work(int seed) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 4096; i++) sb.append((char) ('a' + (i + seed) % 26));
        @SuppressWarnings("unchecked")
        Supplier<Long>[] suppliers = new Supplier[] {() -> 1L, () -> 2L, () -> 3L, () -> 4L};
        long x = seed;
        while (!stop) {
            Shape[] s = shapes;
            for (int i = 0; i < 2000; i++) {
                x = Hot.mix(x) + s[i % s.length].area(x) + suppliers[i & 3].get();
            }
            sb.delete(0, 8);
            sb.append("01234567");
            x += sb.length();
        }
        return x;
    }

    public static void main(String[] args) throws Exception {
        long ms = args.length > 0 ? Long.parseLong(args[0]) : 5000;
        byte[] square = bytesOf(Square.class);
        byte[] hot = bytesOf(Hot.class);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            final int seed = t;
            Thread w = new Thread(() -> sink += work(seed), "churn-worker-" + t);
            w.start();
            workers.add(w);
        }
        Thread starter = new Thread(() -> {
            while (!stop) {
                Thread t = new Thread(() -> {
                    long x = 0;
                    for (int i = 0; i < 100_000; i++) x = Hot.mix(x + i);
                    sink += x;
                    threadsRun.incrementAndGet();
                }, "churn-short");
                t.start();
                try {
                    t.join();
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "churn-starter");
        starter.start();
        long classes = 0, redefinitions = 0;
        long end = System.nanoTime() + ms * 1_000_000L;
        while (System.nanoTime() < end) {
            Class<?> c = new Fresh(square).loadClass(Square.class.getName());
            Shape fresh = (Shape) c.getDeclaredConstructor().newInstance();
            Shape[] s = shapes;
            Shape[] next = new Shape[Math.min(s.length + 1, 8)];
            next[0] = fresh;
            System.arraycopy(s, 0, next, 1, next.length - 1);
            shapes = next;
            classes++;
            Instrumentation inst = instrumentation;
            if (inst != null) {
                inst.redefineClasses(new ClassDefinition(Hot.class, hot));
                redefinitions++;
            }
            Thread.sleep(20);
        }
        stop = true;
        for (Thread w : workers) w.join();
        starter.join();
        System.out.println("churn classes=" + classes + " redefinitions=" + redefinitions
            + " threads=" + threadsRun.get());
    }
}
