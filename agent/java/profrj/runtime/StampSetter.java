package profrj.runtime;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;

/**
 * memory mode, per class: a setter {@code (Object, int)void} of the stamp field the agent added to
 * the class or to a superclass of it, or {@link #NONE}. Found once per class, by the agent (which
 * then counts the class in its census); never a field of the same name the class declared itself.
 * Only a class with the field touches java.lang.invoke: the JDK's own classes, instrumented while
 * that machinery starts, never do.
 */
final class StampSetter extends ClassValue<Object> {
    static final StampSetter OF = new StampSetter();

    /** No stamp field: the object goes to the agent's weak references. */
    static final Object NONE = new Object();

    @Override
    protected Object computeValue(Class<?> type) {
        if (type.isArray() || type.isPrimitive() || type.isInterface()) {
            return NONE;
        }
        Class<?> holder = Probe.stampHolder(type);
        if (holder == null) {
            return NONE;
        }
        try {
            Field f = holder.getDeclaredField(Stamps.FIELD);
            f.setAccessible(true);
            MethodHandle set =
                    MethodHandles.lookup()
                            .unreflectSetter(f)
                            .asType(MethodType.methodType(void.class, Object.class, int.class));
            Probe.stampCensus(type, holder);
            return set;
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            // e.g. a named module that does not open the package to the agent's runtime
            return NONE;
        }
    }
}
