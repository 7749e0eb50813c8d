package profrj.runtime;

/** The agent's type id of each class, asked once per class. */
final class TypeIds extends ClassValue<Integer> {
    static final TypeIds TYPE = new TypeIds();

    @Override
    protected Integer computeValue(Class<?> type) {
        return Integer.valueOf(Probe.typeId(type));
    }
}
