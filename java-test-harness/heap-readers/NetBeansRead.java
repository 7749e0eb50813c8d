import java.io.File;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

import org.netbeans.lib.profiler.heap.FieldValue;
import org.netbeans.lib.profiler.heap.Heap;
import org.netbeans.lib.profiler.heap.HeapFactory;
import org.netbeans.lib.profiler.heap.Instance;
import org.netbeans.lib.profiler.heap.JavaClass;
import org.netbeans.lib.profiler.heap.ObjectArrayInstance;
import org.netbeans.lib.profiler.heap.ObjectFieldValue;
import org.netbeans.lib.profiler.heap.PrimitiveArrayInstance;

/**
 * Reads a heap dump with NetBeans' heap library ({@code org.netbeans.lib.profiler.heap}, what
 * VisualVM and NetBeans' profiler browse dumps with) and prints the text
 * tests/common/heap_readers.rs parses: every class's count (arrays: and their elements), and
 * each object of a class named on the command line with its fields or elements.
 *
 * <p>No stack-trace serial ({@code -} where SharkRead prints one), no {@code trace} and no {@code
 * thread} lines: the library's public API ({@code Heap}, {@code Instance}, {@code JavaClass},
 * {@code GCRoot}) exposes no object's allocation trace. It reads the STACK TRACE records only for
 * a thread root's stack ({@code ThreadObjectGCRoot.getStackTrace}), and its record classes
 * ({@code StackTrace}, {@code StackFrame}) are package-private.
 *
 * <p>Usage: {@code NetBeansRead DUMP CLASS...}. A dump the library cannot read is an exception:
 * the JVM exits non-zero.
 */
public class NetBeansRead {
    public static void main(String[] args) throws Exception {
        Heap heap = HeapFactory.createHeap(new File(args[0]));
        Set<String> named = new HashSet<>(List.of(args).subList(1, args.length));
        for (Object o : heap.getAllClasses()) {
            JavaClass c = (JavaClass) o;
            String name = c.getName();
            System.out.println("count " + name + " " + c.getInstancesCount());
            if (!c.isArray() && !named.contains(name)) {
                continue;
            }
            long elements = 0;
            for (Iterator<?> it = c.getInstancesIterator(); it.hasNext(); ) {
                Instance i = (Instance) it.next();
                if (i instanceof PrimitiveArrayInstance) {
                    PrimitiveArrayInstance a = (PrimitiveArrayInstance) i;
                    elements += a.getLength();
                    if (named.contains(name)) {
                        array(i, name, a.getLength(), a.getValues(), primitive(name));
                    }
                } else if (i instanceof ObjectArrayInstance) {
                    ObjectArrayInstance a = (ObjectArrayInstance) i;
                    elements += a.getLength();
                    if (named.contains(name)) {
                        array(i, name, a.getLength(), a.getValues(), null);
                    }
                } else {
                    System.out.println("object " + id(i) + " " + name + " -");
                    for (Object f : i.getFieldValues()) {
                        FieldValue v = (FieldValue) f;
                        String type = v.getField().getType().getName();
                        System.out.println("field " + id(i) + " " + v.getField().getName() + " "
                                + type + " " + value(type, v));
                    }
                }
            }
            if (c.isArray()) {
                System.out.println("elements " + name + " " + elements);
            }
        }
    }

    /**
     * An array's line: its elements as the library hands them (a primitive's value as text, a
     * reference as the instance it points to).
     */
    static void array(Instance a, String name, int length, List<?> values, String primitive) {
        StringBuilder line = new StringBuilder("array " + id(a) + " " + name + " " + length + " -");
        for (Object v : values) {
            line.append(' ').append(primitive == null ? ref((Instance) v) : primitive(primitive, (String) v));
        }
        System.out.println(line);
    }

    static String value(String type, FieldValue v) {
        if (v instanceof ObjectFieldValue) {
            return ref(((ObjectFieldValue) v).getInstance());
        }
        return primitive(type, v.getValue());
    }

    /** A primitive's text as SharkRead prints it: a char as its code, the others as Java does. */
    static String primitive(String type, String text) {
        if (type.equals("char")) {
            return String.valueOf((int) text.charAt(0));
        }
        return text;
    }

    /** The element type of a primitive array class ({@code int[]}), or null for other arrays. */
    static String primitive(String arrayClass) {
        String e = arrayClass.substring(0, arrayClass.length() - 2);
        switch (e) {
            case "boolean": case "char": case "byte": case "short":
            case "int": case "long": case "float": case "double":
                return e;
            default:
                return null;
        }
    }

    static String ref(Instance i) {
        return i == null ? "null" : "@" + id(i) + ":" + i.getJavaClass().getName();
    }

    static String id(Instance i) {
        return Long.toUnsignedString(i.getInstanceId());
    }
}
