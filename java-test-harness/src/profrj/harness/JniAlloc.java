package profrj.harness;

/**
 * Objects made by native code (the memory mode's VMObjectAlloc path): loads the JNI library given
 * as argument 1 (built from examples/jni_alloc.rs) and keeps 250 {@code Item}s it makes, in one
 * {@code Object[]} it also makes.
 */
public class JniAlloc {
    static final class Item {}

    static native Object[] make(Class<?> c, int n);

    static Object[] kept;

    public static void main(String[] args) {
        System.load(args[0]);
        kept = make(Item.class, 250);
        System.out.println("made " + kept.length);
    }
}
