package profrj.runtime;

/** Each thread's {@link Local}, made on first use. */
final class LocalSlot extends ThreadLocal<Local> {
    @Override
    protected Local initialValue() {
        return Memory.register();
    }
}
