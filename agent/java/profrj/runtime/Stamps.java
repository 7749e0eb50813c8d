package profrj.runtime;

import java.lang.invoke.MethodHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * memory mode: what each thread does with a new object. An object of a class the agent gave a
 * stamp field (most classes of the application, loaded while the mode runs) gets, in that field,
 * the number of its thread's counter for its allocation site, and the counter counts one more
 * made: plain stores, no lock, no JNI. The agent counts the living ones in a heap census. Any
 * other object (arrays, the JDK's classes, classes loaded before the mode started) goes to the
 * agent, which follows it with a weak reference.
 *
 * <p>The counters live in the agent's memory, seen here as direct buffers of 4,096 counters each
 * (64 bytes a counter, the count of objects made first: agent/src/memory/counters.rs). A counter
 * is written by its one thread only. This class is the one place that knows which thread an
 * allocation belongs to: the thread-local {@code MINE}. Virtual threads (JDK 21+) do not stamp
 * yet: there can be millions, each of which would need counters of its own (a counter shared by
 * the virtual threads of one carrier would be written by several at once); their objects go to
 * the agent, which counts them per carrier thread, as it always did.
 */
final class Stamps {
    /** The field the agent adds (agent/src/instrument/stamp.rs). */
    static final String FIELD = "$profrj$stamp";

    private static final int CHUNK_BITS = 12;
    private static final int CHUNK_MASK = (1 << CHUNK_BITS) - 1;
    private static final int COUNTER_SHIFT = 6;
    private static final int PAGE_BITS = 10;
    private static final int PAGE_MASK = (1 << PAGE_BITS) - 1;

    /** What the probes do, the first byte of {@code control}: count nothing. */
    static final int OFF = 0;
    /** Stamp where the class has the field, else a weak reference. */
    static final int STAMP = 1;
    /** Weak references only (a trace wants each object's free). */
    static final int WEAK = 2;

    /** The agent's mode byte, set by the agent (JNI) when it stamps; null: never. */
    private static volatile ByteBuffer control;

    /** The counters' chunks published so far, by number. */
    private static volatile ByteBuffer[] chunks = new ByteBuffer[0];

    private static final StampsLocal MINE = new StampsLocal();

    /** What a virtual thread gets: no counters, every object to the agent. */
    private static final Stamps UNSTAMPED = new Stamps(false);

    /** {@code Thread.isVirtual()} (JDK 21+), or null. */
    private static final java.lang.reflect.Method IS_VIRTUAL = isVirtualMethod();

    /** Does this thread stamp? */
    private final boolean stamps;

    /**
     * This thread's counter for each site, plus one (0: none yet), in pages of 1,024 sites: site
     * numbers are the program's, and a thread meets few of them.
     */
    private int[][] counters = new int[1][];

    Stamps(boolean stamps) {
        this.stamps = stamps;
    }

    static int mode() {
        ByteBuffer c = control;
        return c == null ? OFF : c.get(0);
    }

    /** {@code Probe.alloc}: a new object of a class named in the application, made at site {@code site}. */
    static void made(Object o, int site) {
        int m = mode();
        if (m == OFF) {
            return;
        }
        Object set = m == STAMP ? StampSetter.OF.get(o.getClass()) : StampSetter.NONE;
        if (set == StampSetter.NONE) {
            Probe.allocWeak(o, site);
            return;
        }
        MINE.get().stamp(o, site, (MethodHandle) set);
    }

    /**
     * {@code Probe.allocAny}: an object from reflection or {@code clone()} at place {@code place}.
     * A clone comes with its original's stamp: replaced, or cleared where the object is not
     * stamped.
     */
    static void madeAt(Object o, int place) {
        Class<?> c = o.getClass();
        Object set = c.isArray() ? StampSetter.NONE : StampSetter.OF.get(c);
        int m = mode();
        if (set != StampSetter.NONE && m != STAMP) {
            put((MethodHandle) set, o, 0);
        }
        if (m == OFF) {
            return;
        }
        int type = TypeIds.TYPE.get(c).intValue();
        if (set == StampSetter.NONE || m != STAMP) {
            Probe.allocAt(o, place, type);
            return;
        }
        MINE.get().stamp(o, Probe.stampSite(place, type), (MethodHandle) set);
    }

    /** Counts one more made on this thread's counter for {@code site}, then stamps {@code o} with it. */
    private void stamp(Object o, int site, MethodHandle set) {
        int[][] pages = counters;
        int[] page = (site >>> PAGE_BITS) < pages.length ? pages[site >>> PAGE_BITS] : null;
        int c = page != null ? page[site & PAGE_MASK] - 1 : -1;
        if (c < 0 && (!stamps || (c = counter(site)) < 0)) {
            put(set, o, 0); // a clone's copy of its original's stamp
            Probe.allocWeak(o, site);
            return;
        }
        ByteBuffer b = chunks[c >>> CHUNK_BITS];
        int at = (c & CHUNK_MASK) << COUNTER_SHIFT;
        b.putLong(at, b.getLong(at) + 1);
        put(set, o, c + 1);
    }

    static void put(MethodHandle set, Object o, int stamp) {
        try {
            set.invokeExact(o, stamp);
        } catch (Throwable e) {
            // cannot happen: the setter's class is the object's class or a superclass of it
        }
    }

    /** This thread's new counter for {@code site} (-1: the agent has none to give). */
    private int counter(int site) {
        int c = Probe.stampCounter(site);
        if (c < 0 || !published(c >>> CHUNK_BITS)) {
            return -1;
        }
        int p = site >>> PAGE_BITS;
        if (p >= counters.length) {
            counters = Arrays.copyOf(counters, Math.max(p + 1, 2 * counters.length));
        }
        if (counters[p] == null) {
            counters[p] = new int[1 << PAGE_BITS];
        }
        counters[p][site & PAGE_MASK] = c + 1;
        return c;
    }

    private static boolean published(int chunk) {
        ByteBuffer[] all = chunks;
        if (chunk < all.length && all[chunk] != null) {
            return true;
        }
        synchronized (Stamps.class) {
            all = chunks;
            if (chunk < all.length && all[chunk] != null) {
                return true;
            }
            ByteBuffer b = Probe.stampChunk(chunk);
            if (b == null) {
                return false;
            }
            b.order(ByteOrder.nativeOrder());
            all = Arrays.copyOf(all, Math.max(all.length, chunk + 1));
            all[chunk] = b;
            chunks = all;
            return true;
        }
    }

    private static java.lang.reflect.Method isVirtualMethod() {
        try {
            return Thread.class.getMethod("isVirtual");
        } catch (NoSuchMethodException | RuntimeException e) {
            return null; // before JDK 21: no virtual threads
        }
    }

    private static boolean isVirtual(Thread t) {
        try {
            return IS_VIRTUAL != null && Boolean.TRUE.equals(IS_VIRTUAL.invoke(t));
        } catch (ReflectiveOperationException | RuntimeException e) {
            return false;
        }
    }

    /** Each thread's {@code Stamps}. */
    static final class StampsLocal extends ThreadLocal<Stamps> {
        @Override
        protected Stamps initialValue() {
            return isVirtual(Thread.currentThread()) ? UNSTAMPED : new Stamps(true);
        }
    }
}
