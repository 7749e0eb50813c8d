package profrj.runtime;

/** Objects of one type allocated by one thread: counts written by that thread, frees by drain. */
final class Counter {
    final int type;
    long allocated;
    long max;
    volatile long freed;

    Counter(int type) {
        this.type = type;
    }
}
