package profrj.runtime;

/** Per class: does {@code clone()} called from it run {@code Object.clone} (no override)? */
final class CloneKind extends ClassValue<Boolean> {
    static final CloneKind USES_OBJECT_CLONE = new CloneKind();

    @Override
    protected Boolean computeValue(Class<?> type) {
        for (Class<?> c = type; c != null && c != Object.class; c = c.getSuperclass()) {
            try {
                c.getDeclaredMethod("clone");
                return Boolean.FALSE;
            } catch (NoSuchMethodException e) {
                // not here: look in the superclass
            } catch (SecurityException | LinkageError e) {
                return Boolean.FALSE;
            }
        }
        return Boolean.TRUE;
    }
}
