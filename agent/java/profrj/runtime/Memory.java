package profrj.runtime;

import java.lang.ref.ReferenceQueue;

/**
 * Live objects per thread and type, for the memory mode. Each tracked object gets a weak
 * reference (a {@link Tracker}) registered with one queue: the GC clears and queues it when the
 * object is collected, and draining the queue counts the free. No JVMTI tag, no lock and no
 * native call on the allocating path: a counter update, one small allocation, one array store.
 *
 * <p>Uses only its own classes and the JDK's ThreadLocal and java.lang.ref (which the agent never
 * instruments for allocations), so tracking cannot recurse into itself.
 */
final class Memory {
    static final ReferenceQueue<Object> QUEUE = new ReferenceQueue<Object>();
    private static final LocalSlot LOCAL = new LocalSlot();
    /** Every thread's state, ended threads' too: it keeps their trackers reachable. */
    private static Local[] all = new Local[16];
    private static int count;

    private Memory() {}

    static void track(Object o, int type) {
        if (o != null) {
            LOCAL.get().track(o, type);
        }
    }

    /**
     * After a call to {@code clone()} that returned {@code result}, resolved from class {@code
     * from}: the object is new, and tracked, when the call reached {@code Object.clone} (no
     * override on the way). An override makes its object itself, and is instrumented itself.
     */
    static void cloned(Object result, Class<?> from) {
        if (result != null && CloneKind.USES_OBJECT_CLONE.get(from).booleanValue()) {
            track(result, TypeIds.TYPE.get(result.getClass()).intValue());
        }
    }

    /** The calling thread's state, made on its first allocation. */
    static synchronized Local register() {
        Local l = new Local(threadId());
        if (count == all.length) {
            Local[] bigger = new Local[count * 2];
            System.arraycopy(all, 0, bigger, 0, count);
            all = bigger;
        }
        all[count++] = l;
        return l;
    }

    /** Counts the frees the GC has queued. Any thread may call it; one at a time. */
    static void drain() {
        synchronized (QUEUE) {
            for (Tracker t = (Tracker) QUEUE.poll(); t != null; t = (Tracker) QUEUE.poll()) {
                Counter c = t.counter;
                c.freed = c.freed + 1;
                t.dead = true;
            }
        }
    }

    /**
     * After draining: (thread id, type, live, max) for every thread and type that allocated,
     * flattened. Called by the agent for a snapshot.
     */
    static long[] snapshot() {
        drain();
        Local[] locals;
        int n;
        synchronized (Memory.class) {
            locals = all;
            n = count;
        }
        int rows = 0;
        for (int i = 0; i < n; i++) {
            rows += locals[i].used();
        }
        long[] out = new long[rows * 4];
        int k = 0;
        for (int i = 0; i < n; i++) {
            k = locals[i].write(out, k);
        }
        return out;
    }

    /** The agent's id of the calling thread (-1 for none). */
    private static native int threadId();

    /** The agent's id of a type (the one instrumented code passes for it). */
    static native int typeId(Class<?> type);
}
