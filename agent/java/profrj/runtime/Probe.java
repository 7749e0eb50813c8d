package profrj.runtime;

/**
 * What instrumented code calls. Defined by the agent in the boot class loader (so every class,
 * the JDK's included, can see it) and never instrumented itself; its natives are bound with
 * RegisterNatives. Compiled for Java 8 so every supported JVM loads it.
 */
public final class Probe {
    private Probe() {}

    // profile mode: method entry, normal exit, exit by exception.
    public static native void enter(int method);

    public static native void exit(int method);

    public static native void unwind(int method);

    // coverage mode: each method's counters, by the id the agent gave it. The agent publishes
    // each array here (JNI) when it makes it, so later calls find it without leaving Java. Not
    // volatile, so the JIT may keep it in a register across inlined calls: a thread that reads
    // a stale table (or a stale null in it) takes the slow path, which answers the same array.
    private static long[][] COV;

    public static long[] cov(int id) {
        long[][] c = COV;
        if (c != null && id < c.length) {
            long[] a = c[id];
            if (a != null) {
                return a;
            }
        }
        return covSlow(id);
    }

    private static native long[] covSlow(int id);

    // memory mode: a new object or array of the type the agent numbered `type`.
    public static void alloc(Object o, int type) {
        Memory.track(o, type);
    }

    // memory mode: a new object from a JDK method that always makes one (reflection).
    public static void allocAny(Object o) {
        if (o != null) {
            Memory.track(o, TypeIds.TYPE.get(o.getClass()).intValue());
        }
    }

    // memory mode: `result` came from `receiver.clone()` (invokevirtual or invokeinterface).
    public static void cloned(Object result, Object receiver) {
        if (receiver != null) {
            Memory.cloned(result, receiver.getClass());
        }
    }

    // memory mode: `result` came from `super.clone()`, resolved from class `from`.
    public static void clonedFrom(Object result, Class<?> from) {
        Memory.cloned(result, from);
    }
}
