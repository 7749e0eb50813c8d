package profrj.harness;

import java.io.InputStream;
import java.lang.reflect.Method;

/**
 * A class defined with a null name, {@code defineClass(null, bytes, …)} (tests/profile.rs): the
 * bytes of {@link NamelessTarget}, which nothing loads by its name, defined by a loader of its own
 * without naming it; then {@code work(i)} called {@code CALLS} times, i = 0, 1, 2. The JVM gives a
 * class file hook no name for such a class: its name is in the bytes alone. The class stays
 * reachable to the end (so do the arrays it keeps).
 */
public class NamelessDefine {
    static final int CALLS = 3;
    static Class<?> defined;

    /** Defines classes from bytes alone, never by name. */
    static final class Definer extends ClassLoader {
        Definer() {
            super(NamelessDefine.class.getClassLoader());
        }

        Class<?> define(byte[] bytes) {
            return defineClass(null, bytes, 0, bytes.length);
        }
    }

    public static void main(String[] args) throws Exception {
        byte[] bytes;
        try (InputStream in = NamelessDefine.class.getResourceAsStream("NamelessTarget.class")) {
            bytes = in.readAllBytes();
        }
        Class<?> c = new Definer().define(bytes);
        defined = c;
        Method work = c.getDeclaredMethod("work", int.class);
        long sum = 0;
        for (int i = 0; i < CALLS; i++) {
            sum += (Integer) work.invoke(null, i);
        }
        System.out.println("defined " + c.getName() + ", sum " + sum);
    }
}
