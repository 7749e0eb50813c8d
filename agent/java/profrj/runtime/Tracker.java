package profrj.runtime;

import java.lang.ref.WeakReference;

/** Cleared and queued by the GC when its object is collected. */
final class Tracker extends WeakReference<Object> {
    final Counter counter;
    /** Its free was counted: the owner's list may drop it. */
    boolean dead;

    Tracker(Object o, Counter counter) {
        super(o, Memory.QUEUE);
        this.counter = counter;
    }
}
