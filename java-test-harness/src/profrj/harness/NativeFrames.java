package profrj.harness;

/**
 * Native frames' ground truth (cstack=). By construction:
 * - {@code jni LIB MS}: loads the JNI library LIB (built from
 *   java-test-harness/native/native_frames.c) and, in thread "native-spin",
 *   calls {@link #spin(long)} from {@link #callNative()} in a loop for MS
 *   milliseconds. Each call runs C code (profrj_spin under
 *   Java_profrj_harness_NativeFrames_spin) for tens of milliseconds; the
 *   thread does nothing else, so all its time but the loop's few Java
 *   instructions between calls is in profrj_spin;
 * - {@code vm MS}: thread "vm-work" makes Throwables 200 frames deep for MS
 *   milliseconds: almost all its time is in the VM's own C++ code filling
 *   in their stack traces (Throwable.fillInStackTrace(int), a native method
 *   whose code is JVM_FillInStackTrace, in libjvm).
 * - {@code kernel MS}: thread "kernel-work" reads /dev/zero into a 4 MiB direct buffer for MS
 *   milliseconds (FileChannel.read: the kernel zeroes the buffer itself, nothing copies it in
 *   user code): almost all its CPU is the kernel's, in the read system call, the rest the JDK's
 *   Java and C code around each call. The thread reads its own user and system CPU ticks from
 *   /proc/thread-self/stat before and after, and prints the system share in per mille: the
 *   share of its CPU samples that should have kernel frames on top.
 * - {@code blocked MS}: thread "kernel-blocked" reads a pipe (java.nio.channels.Pipe, blocking)
 *   that main writes one byte into after MS milliseconds: the thread waits in the kernel's read
 *   system call the whole time but for its first instructions.
 * Prints "calls N" (jni), "throwables N" (vm), "reads N kernel-permille P" (kernel) or
 * "blocked-read N" (blocked) at the end.
 */
public class NativeFrames {
    static native long spin(long n);

    static volatile long sink;
    static volatile Throwable last;

    static long callNative(long deadline) {
        long calls = 0;
        while (System.nanoTime() < deadline) {
            sink += spin(20_000_000L);
            calls++;
        }
        return calls;
    }

    static long deep(int depth, long deadline) {
        if (depth > 0) {
            return deep(depth - 1, deadline);
        }
        long made = 0;
        while (System.nanoTime() < deadline) {
            // Kept, not hashed: an identity hash would revoke the object's
            // biased lock on JDK 11, a VM operation this thread waits for.
            last = new Throwable();
            made++;
        }
        return made;
    }

    /** This thread's (user, system) CPU ticks, fields 14 and 15 of /proc/thread-self/stat. */
    static long[] ownTicks() throws java.io.IOException {
        String stat = new String(java.nio.file.Files.readAllBytes(
                java.nio.file.Paths.get("/proc/thread-self/stat")));
        // Fields after the command's closing parenthesis, which may hold spaces.
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
        return new long[] {Long.parseLong(f[11]), Long.parseLong(f[12])};
    }

    static long readZeros(long deadline, long[] permille) throws java.io.IOException {
        // A direct buffer: the kernel writes into it, no copy in user code.
        java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocateDirect(4 << 20);
        long reads = 0;
        long[] before = ownTicks();
        try (java.nio.channels.FileChannel in = java.nio.channels.FileChannel.open(
                java.nio.file.Paths.get("/dev/zero"))) {
            while (System.nanoTime() < deadline) {
                buf.clear();
                reads += in.read(buf) > 0 ? 1 : 0;
            }
        }
        long[] after = ownTicks();
        long user = after[0] - before[0];
        long system = after[1] - before[1];
        permille[0] = system * 1000 / Math.max(1, user + system);
        return reads;
    }

    static long blockedRead(java.nio.channels.Pipe pipe) {
        try {
            return pipe.source().read(java.nio.ByteBuffer.allocate(1));
        } catch (java.io.IOException e) {
            throw new RuntimeException(e);
        }
    }

    public static void main(String[] args) throws Exception {
        long[] result = new long[1];
        Thread t;
        if (args[0].equals("blocked")) {
            java.nio.channels.Pipe pipe = java.nio.channels.Pipe.open();
            t = new Thread(() -> result[0] = blockedRead(pipe), "kernel-blocked");
            t.start();
            Thread.sleep(Long.parseLong(args[1]));
            pipe.sink().write(java.nio.ByteBuffer.wrap(new byte[] {1}));
            t.join();
            System.out.println("blocked-read " + result[0]);
            return;
        }
        if (args[0].equals("kernel")) {
            long deadline = System.nanoTime() + Long.parseLong(args[1]) * 1_000_000L;
            long[] permille = new long[1];
            t = new Thread(() -> {
                try {
                    result[0] = readZeros(deadline, permille);
                } catch (java.io.IOException e) {
                    throw new RuntimeException(e);
                }
            }, "kernel-work");
            t.start();
            t.join();
            System.out.println("reads " + result[0] + " kernel-permille " + permille[0]);
            return;
        }
        if (args[0].equals("jni")) {
            System.load(args[1]);
            long deadline = System.nanoTime() + Long.parseLong(args[2]) * 1_000_000L;
            t = new Thread(() -> result[0] = callNative(deadline), "native-spin");
        } else {
            long deadline = System.nanoTime() + Long.parseLong(args[1]) * 1_000_000L;
            t = new Thread(() -> result[0] = deep(200, deadline), "vm-work");
        }
        t.start();
        t.join();
        System.out.println((args[0].equals("jni") ? "calls " : "throwables ") + result[0]);
    }
}
