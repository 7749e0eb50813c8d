package profrj.runtime;

/** One thread's allocation counts and the trackers of its live objects. */
final class Local {
    final int thread;
    private Counter[] byType = new Counter[64];
    private Tracker[] kept = new Tracker[1024];
    private int keptCount;

    Local(int thread) {
        this.thread = thread;
    }

    void track(Object o, int type) {
        Counter[] counters = byType;
        Counter c = type < counters.length ? counters[type] : null;
        if (c == null) {
            c = counter(type);
        }
        long live = ++c.allocated - c.freed;
        if (live > c.max) {
            c.max = live;
        }
        if (keptCount == kept.length) {
            compact();
        }
        kept[keptCount++] = new Tracker(o, c);
    }

    private Counter counter(int type) {
        if (type >= byType.length) {
            Counter[] bigger = new Counter[Math.max(type + 1, byType.length * 2)];
            System.arraycopy(byType, 0, bigger, 0, byType.length);
            byType = bigger;
        }
        Counter c = new Counter(type);
        byType[type] = c;
        return c;
    }

    /** Drops the trackers whose objects are known to be freed; grows if still half full. */
    private void compact() {
        Memory.drain();
        int j = 0;
        for (int i = 0; i < keptCount; i++) {
            Tracker t = kept[i];
            if (!t.dead) {
                kept[j++] = t;
            }
        }
        for (int i = j; i < keptCount; i++) {
            kept[i] = null;
        }
        keptCount = j;
        if (j > kept.length / 2) {
            Tracker[] bigger = new Tracker[kept.length * 2];
            System.arraycopy(kept, 0, bigger, 0, j);
            kept = bigger;
        }
    }

    /** How many types this thread allocated. */
    int used() {
        Counter[] counters = byType;
        int n = 0;
        for (Counter c : counters) {
            if (c != null) {
                n++;
            }
        }
        return n;
    }

    int write(long[] out, int k) {
        Counter[] counters = byType;
        for (Counter c : counters) {
            if (c != null && k + 4 <= out.length) {
                out[k++] = thread;
                out[k++] = c.type;
                out[k++] = c.allocated - c.freed;
                out[k++] = c.max;
            }
        }
        return k;
    }
}
