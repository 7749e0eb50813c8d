package profrj.harness;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.function.Supplier;
import java.util.zip.CRC32;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Workloads whose CPU time is spent where the JVM's code has no Java frame of
 * its own: copy and intrinsic stubs, vtable and itable stubs, inline-cache
 * stubs, compiled methods' prologues. A stack sampler that cannot walk out of
 * such code loses the sample's Java callers. Each mode spends (almost) all of
 * its time under one Java method, named below, which a sampler must show.
 *
 * Arguments: MODE [MILLISECONDS (default 3000)] [cpu]; prints units=N, the
 * rounds of work done, and cpu-ns=N, the main thread's CPU time over them (a
 * signal handler's time counts in it): a profiler's cost shows as more CPU
 * per round. The loop runs MILLISECONDS of wall time, or with {@code cpu}
 * of the main thread's CPU time: then its share of the program's CPU (and
 * of a CPU sampler's samples), against the set-up's fixed CPU, is the same
 * on a loaded machine as on a quiet one. Modes, and the method the time is under:
 *   delete       StringBuilder.delete on a 64 KiB builder (an arraycopy stub): delete
 *   lambdas      Supplier lambdas called through the interface (itable stubs): lambdaLoop
 *   megamorphic  a virtual call with five receiver classes (vtable stubs): megamorphicLoop
 *   crc32        CRC32.update over 64 KiB (the CRC32 intrinsic stub): crcLoop
 *   indexof      String.indexOf of a char at the end of a 64 KiB string: indexOfLoop
 *   fill         Arrays.fill of a 64 KiB array (a fill stub where the JIT uses one): fillLoop
 *   aes          AES/CBC encryption of 16 KiB (the AES intrinsic stubs): aesLoop
 *   nanotime     System.nanoTime (compiled code calls the VM's C++ code, which
 *                calls the C library, with no Java frame set up): nanoTimeLoop
 *   entries      calls to a method kept interpreted (run with
 *                -XX:CompileCommand=exclude,profrj.harness.StubWorkloads::manyLocals),
 *                whose time is the interpreter's method entry zeroing its
 *                200 local slots and building its frame: entryLoop
 */
public class StubWorkloads {
    static volatile long sink;
    static ThreadMXBean threads;
    /** The loops end at a CPU time of the main thread, not a wall time. */
    static boolean byCpu;

    /** Is the loop's end, `end`, past? */
    static boolean past(long end) {
        return (byCpu ? threads.getCurrentThreadCpuTime() : System.nanoTime()) >= end;
    }

    /** Rounds of the mode's inner loop done: work per run, for overhead ratios. */
    static long units;

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "delete";
        long ms = args.length > 1 ? Long.parseLong(args[1]) : 3000;
        threads = ManagementFactory.getThreadMXBean();
        byCpu = args.length > 2 && args[2].equals("cpu");
        long cpu0 = threads.getCurrentThreadCpuTime();
        long end = (byCpu ? cpu0 : System.nanoTime()) + ms * 1_000_000L;
        switch (mode) {
            case "delete": sink = deleteLoop(end); break;
            case "lambdas": sink = lambdaLoop(end); break;
            case "megamorphic": sink = megamorphicLoop(end); break;
            case "crc32": sink = crcLoop(end); break;
            case "indexof": sink = indexOfLoop(end); break;
            case "fill": sink = fillLoop(end); break;
            case "aes": sink = aesLoop(end); break;
            case "nanotime": sink = nanoTimeLoop(end); break;
            case "entries": sink = entryLoop(end); break;
            default:
                System.err.println("unknown mode " + mode
                    + " (delete, lambdas, megamorphic, crc32, indexof, fill, aes, nanotime, entries)");
                System.exit(2);
        }
        System.out.println("units=" + units + " cpu-ns=" + (threads.getCurrentThreadCpuTime() - cpu0));
    }

    /** Each delete moves the builder's 64 KiB down by 16 chars. */
    static long deleteLoop(long end) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < 65536; i++) sb.append((char) ('a' + i % 26));
        String chunk = "0123456789abcdef";
        long n = 0;
        while (!past(end)) {
            units++;
            for (int i = 0; i < 100; i++) {
                sb.delete(0, 16);
                sb.append(chunk);
            }
            n += sb.length();
        }
        return n;
    }

    /** Tiny lambdas called through Supplier: the call site sees five classes. */
    static long lambdaLoop(long end) {
        long[] box = {1};
        @SuppressWarnings("unchecked")
        Supplier<Long>[] suppliers = new Supplier[] {
            () -> box[0] + 1, () -> box[0] * 3, () -> box[0] ^ 5, () -> box[0] - 7, () -> box[0] | 9,
        };
        long n = 0;
        while (!past(end)) {
            units++;
            for (int i = 0; i < 100_000; i++) {
                n += suppliers[i % suppliers.length].get();
                box[0] = n;
            }
        }
        return n;
    }

    abstract static class Shape {
        abstract long area(long x);
    }
    static final class A extends Shape { long area(long x) { return x + 1; } }
    static final class B extends Shape { long area(long x) { return x * 3; } }
    static final class C extends Shape { long area(long x) { return x ^ 5; } }
    static final class D extends Shape { long area(long x) { return x - 7; } }
    static final class E extends Shape { long area(long x) { return x | 9; } }

    /** A virtual call with five receiver classes: a vtable stub per call. */
    static long megamorphicLoop(long end) {
        Shape[] shapes = {new A(), new B(), new C(), new D(), new E()};
        long n = 0;
        while (!past(end)) {
            units++;
            for (int i = 0; i < 100_000; i++) {
                n = shapes[i % shapes.length].area(n);
            }
        }
        return n;
    }

    static long crcLoop(long end) {
        byte[] data = new byte[65536];
        for (int i = 0; i < data.length; i++) data[i] = (byte) i;
        CRC32 crc = new CRC32();
        while (!past(end)) {
            units++;
            for (int i = 0; i < 100; i++) crc.update(data, 0, data.length);
        }
        return crc.getValue();
    }

    static long indexOfLoop(long end) {
        char[] chars = new char[65536];
        Arrays.fill(chars, 'a');
        chars[chars.length - 1] = 'z';
        String s = new String(chars);
        long n = 0;
        while (!past(end)) {
            units++;
            for (int i = 0; i < 100; i++) n += s.indexOf('z') + s.indexOf("zz");
        }
        return n;
    }

    static long fillLoop(long end) {
        int[] data = new int[16384];
        long n = 0;
        while (!past(end)) {
            units++;
            for (int i = 0; i < 100; i++) {
                Arrays.fill(data, i);
                n += data[i];
            }
        }
        return n;
    }

    static long aesLoop(long end) throws Exception {
        byte[] key = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
        Cipher cipher = Cipher.getInstance("AES/CBC/NoPadding");
        cipher.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"), new IvParameterSpec(key));
        byte[] in = new byte[16384];
        byte[] out = new byte[in.length];
        long n = 0;
        while (!past(end)) {
            units++;
            for (int i = 0; i < 10; i++) {
                cipher.update(in, 0, in.length, out, 0);
                n += out[i];
            }
        }
        return n;
    }

    static long nanoTimeLoop(long end) {
        long n = 0;
        while (!past(end)) {
            units++;
            for (int i = 0; i < 1000; i++) n += System.nanoTime() & 1;
        }
        return n;
    }

    /** Calls from compiled code (through the c2i adapter) into a method kept interpreted. */
    static long entryLoop(long end) {
        long n = 0;
        while (!past(end)) {
            units++;
            for (int i = 0; i < 1000; i++) n += manyLocals(i);
        }
        return n;
    }

    /**
     * 100 long locals declared and never used: javac gives each its two
     * slots, and the interpreter's entry zeroes all 200 on every call.
     */
    @SuppressWarnings("unused")
    static long manyLocals(long x) {
        long a00, a01, a02, a03, a04, a05, a06, a07, a08, a09,
            a10, a11, a12, a13, a14, a15, a16, a17, a18, a19,
            a20, a21, a22, a23, a24, a25, a26, a27, a28, a29,
            a30, a31, a32, a33, a34, a35, a36, a37, a38, a39,
            a40, a41, a42, a43, a44, a45, a46, a47, a48, a49,
            a50, a51, a52, a53, a54, a55, a56, a57, a58, a59,
            a60, a61, a62, a63, a64, a65, a66, a67, a68, a69,
            a70, a71, a72, a73, a74, a75, a76, a77, a78, a79,
            a80, a81, a82, a83, a84, a85, a86, a87, a88, a89,
            a90, a91, a92, a93, a94, a95, a96, a97, a98, a99;
        return x + 1;
    }
}
