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
 * Prints "calls N" (jni) or "throwables N" (vm) at the end.
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

    public static void main(String[] args) throws Exception {
        long[] result = new long[1];
        Thread t;
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
