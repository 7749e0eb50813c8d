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

    // trace mode: method entry and normal exit, as for profile.
    public static native void traceEnter(int method);

    public static native void traceExit(int method);

    // trace mode: an exception leaves `method` (its catch-all handler), is thrown by it (before
    // an athrow) or is caught by one of its handlers (at the handler's start). The agent gets the
    // exception's type id and identity hash: it tells one exception object from the next without
    // holding it.
    public static void traceUnwind(Throwable t, int method) {
        if (t != null) {
            traceLeave(method, type(t), System.identityHashCode(t));
        }
    }

    public static void traceThrow(Throwable t, int method) {
        if (t != null) {
            traceThrown(method, type(t), System.identityHashCode(t));
        }
    }

    public static void traceCatch(Throwable t, int method) {
        if (t != null) {
            traceCaught(method, type(t), System.identityHashCode(t));
        }
    }

    private static int type(Object o) {
        return TypeIds.TYPE.get(o.getClass()).intValue();
    }

    private static native void traceLeave(int method, int type, int hash);

    private static native void traceThrown(int method, int type, int hash);

    private static native void traceCaught(int method, int type, int hash);

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

    /**
     * coverage mode with stripes: the number whose low bits pick the calling thread's copy of a
     * method's counters. Thread ids are handed out in sequence, so up to N threads started one
     * after the other count on N distinct copies; once inlined, a load of the current thread and
     * one of its field.
     */
    public static int thread() {
        return (int) Thread.currentThread().getId();
    }

    /**
     * Bootstrap method of the call site {@code s<mask>_<stride>} (type {@code ()I}) that classes of
     * version 55+ pick their copy of a method's counters with: the copy's first counter. While one
     * application thread runs, a constant 0 (every call counts in copy 0; the JIT folds it, as if
     * there were one copy); from {@link #manyThreads} on, {@code (thread() & mask) * stride} (the
     * JIT recompiles what folded the 0). Calls with one mask and stride share one site.
     */
    public static java.lang.invoke.CallSite stripe(
            java.lang.invoke.MethodHandles.Lookup lookup,
            String name,
            java.lang.invoke.MethodType type) {
        return Stripes.site(name);
    }

    /**
     * Called by the agent when a second application thread starts: from then on every {@link
     * #stripe} site picks the copy by thread. Returns null (an object, for the agent's call).
     */
    public static Object manyThreads() {
        Stripes.many();
        return null;
    }

    /** The first counter of the calling thread's copy, by {@link #thread}. */
    static int base(int mask, int stride) {
        return (thread() & mask) * stride;
    }

    /**
     * {@link #stripe}'s call sites, one per mask and stride: each bound to a constant 0 until
     * {@link #many}, then to {@link #base} (MutableCallSite: the JIT inlines the target and
     * recompiles when it changes).
     */
    static final class Stripes {
        private static final java.lang.invoke.MethodHandle BASE;
        private static final java.lang.invoke.MethodHandle ZERO =
                java.lang.invoke.MethodHandles.constant(int.class, 0);
        private static final java.util.HashMap<String, java.lang.invoke.MutableCallSite> SITES =
                new java.util.HashMap<String, java.lang.invoke.MutableCallSite>();
        private static boolean many;

        static {
            try {
                BASE =
                        java.lang.invoke.MethodHandles.lookup()
                                .findStatic(
                                        Probe.class,
                                        "base",
                                        java.lang.invoke.MethodType.methodType(
                                                int.class, int.class, int.class));
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        /** {@code s<mask>_<stride>}'s first counter by thread. */
        private static java.lang.invoke.MethodHandle striped(String name) {
            int cut = name.indexOf('_');
            int mask = Integer.parseInt(name.substring(1, cut));
            int stride = Integer.parseInt(name.substring(cut + 1));
            return java.lang.invoke.MethodHandles.insertArguments(BASE, 0, mask, stride);
        }

        static synchronized java.lang.invoke.CallSite site(String name) {
            java.lang.invoke.MutableCallSite site = SITES.get(name);
            if (site == null) {
                site = new java.lang.invoke.MutableCallSite(many ? striped(name) : ZERO);
                SITES.put(name, site);
            }
            return site;
        }

        static synchronized void many() {
            if (many) {
                return;
            }
            many = true;
            java.lang.invoke.MutableCallSite[] all =
                    new java.lang.invoke.MutableCallSite[SITES.size()];
            int i = 0;
            for (java.util.Map.Entry<String, java.lang.invoke.MutableCallSite> e :
                    SITES.entrySet()) {
                e.getValue().setTarget(striped(e.getKey()));
                all[i++] = e.getValue();
            }
            java.lang.invoke.MutableCallSite.syncAll(all);
        }
    }

    /**
     * Bootstrap method of the dynamic constant {@code c<id>} (type {@code long[]}) that classes of
     * version 55+ load their counters with: resolved once, then a constant the JIT folds, so a
     * call costs no lookup at all.
     */
    public static long[] counters(
            java.lang.invoke.MethodHandles.Lookup lookup, String name, Class<?> type) {
        return cov(Integer.parseInt(name.substring(1)));
    }

    // memory mode: a new object of a class the application names, made at the allocation site
    // the agent numbered `site` (a method, a line and a type): stamped with its thread's counter
    // for that site where the agent gave its class a stamp field, else as allocWeak (Stamps).
    public static void alloc(Object o, int site) {
        if (o != null) {
            Stamps.made(o, site);
        }
    }

    // memory mode: a new array or JDK object made at site `site`. The agent counts it on its
    // thread's counter for that site, and follows it to its death (a JNI weak reference read in
    // GC pauses, or a JVMTI tag and the ObjectFree event).
    public static native void allocWeak(Object o, int site);

    // memory mode, stamps (Stamps, StampSetter, StampCheck): the calling thread's new counter for
    // `site` (-1: none); the direct buffer over chunk `chunk` of the counters; the class that
    // declares the stamp field `type` has, if any; `type`'s objects counted in the census from
    // now on; the site of (place, type); and the check of the census on StampCheck's objects.
    static native int stampCounter(int site);

    static native java.nio.ByteBuffer stampChunk(int chunk);

    static native Class<?> stampHolder(Class<?> type);

    static native void stampCensus(Class<?> type, Class<?> holder);

    static native int stampSite(int place, int type);

    static native String stampCheck(Object base, Object sub, int baseStamp, int subStamp);

    // memory mode: a new object of type `type` made by the call at place `place` (a method and a
    // line), whose type is known only now (reflection, clone).
    static native void allocAt(Object o, int place, int type);

    /**
     * memory mode: the names of the JVM's garbage collectors, comma-separated (the agent reads
     * its tracked objects' weak references in GC pauses only on collectors it knows do that).
     */
    static String collectors() {
        StringBuilder names = new StringBuilder();
        for (java.lang.management.GarbageCollectorMXBean gc :
                java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
            names.append(gc.getName()).append(',');
        }
        return names.toString();
    }

    /** The agent's id of a type (the one instrumented code passes for it). */
    static native int typeId(Class<?> type);

    // memory mode: a new object from a JDK method that always makes one (reflection), called at
    // place `place`.
    public static void allocAny(Object o, int place) {
        if (o != null) {
            Stamps.madeAt(o, place);
        }
    }

    // memory mode: `result` came from `receiver.clone()` (invokevirtual or invokeinterface) at
    // place `place`.
    public static void cloned(Object result, Object receiver, int place) {
        if (receiver != null) {
            clonedFrom(result, receiver.getClass(), place);
        }
    }

    /**
     * memory mode: `result` came from a call to {@code clone()} resolved from class {@code from}
     * (for {@code super.clone()}, the superclass) at place {@code place}. The object is new, and
     * counted, when the call reached {@code Object.clone} (no override on the way). An override
     * makes its object itself, and is instrumented itself.
     */
    public static void clonedFrom(Object result, Class<?> from, int place) {
        if (result != null && CloneKind.USES_OBJECT_CLONE.get(from).booleanValue()) {
            allocAny(result, place);
        }
    }

    // lock mode: LockSupport.park(Object) and parkNanos(Object, long) call these at entry and
    // before they return. Only a blocker that is a lock's synchronizer counts
    // (AbstractOwnableSynchronizer: ReentrantLock, ReentrantReadWriteLock, Semaphore...);
    // Condition.await parks with its ConditionObject, which is not one, and is left out.
    public static void parkEnter(Object blocker) {
        if (blocker instanceof java.util.concurrent.locks.AbstractOwnableSynchronizer) {
            parking(blocker);
        }
    }

    public static void parkExit(Object blocker) {
        if (blocker instanceof java.util.concurrent.locks.AbstractOwnableSynchronizer) {
            parked(blocker);
        }
    }

    private static native void parking(Object blocker);

    private static native void parked(Object blocker);
}
