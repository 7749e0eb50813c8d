package profrj.harness;

/**
 * The template of a class whose name, method name and source file name hold
 * characters javac cannot put there (it drops control characters from
 * identifiers): {@link OddNames} loads these bytes, replaces every
 * "PayloadWXYZ" with "Payload" + U+0001, ESC, BEL and a backslash (the same
 * length in the class file's modified UTF-8) and defines the result, so the
 * profiled program really runs `OddNamesPayload\u0001\u001b\u0007\\` and its
 * method `spinWXYZ` renamed alike. Each call of {@link #run} spins ~200 ms
 * and allocates, so the sampler, the allocation sampler and coverage all
 * see the odd names.
 */
public class OddNamesPayloadWXYZ implements Runnable {
    static volatile Object kept;

    static long spinPayloadWXYZ(long x) {
        kept = new OddNamesPayloadWXYZ[64];
        return BusyThreads.spin(x);
    }

    @Override
    public void run() {
        long end = System.nanoTime() + 200_000_000L;
        long x = 1;
        while (System.nanoTime() < end) {
            x = spinPayloadWXYZ(x);
        }
        BusyThreads.sink += x;
    }
}
