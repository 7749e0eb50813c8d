package profrj.harness;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Method;

/**
 * Names no UTF-8 can carry as the JVM hands them out (tests/names.rs). {@code W} is an emoji (a
 * surrogate pair), U+0000 and a lone high surrogate. The class {@code profrj.harness.OddName + W},
 * with methods {@code work + W} and {@code hold + W} and source file {@code OddName + W + .java},
 * is {@link OddNameODD} with "ODD" replaced by W in its class file. A thread named {@code "odd-" +
 * W + "-thread"} first waits for the class's monitor, which main holds until it does, then holds it
 * 100 times for 1 ms while a thread "holder" does too,
 * then runs {@code work} for 400 ms: CPU, calls, lines, objects of that class kept, arrays of it
 * made, and waits for its monitor, all under those names. main initialises the class (its
 * monitor object is main's) and keeps it reachable to the end (so do the 64 objects it keeps).
 */
public class OddJavaNames {
    static final String W = "\uD83D\uDE00\u0000\uD83D";
    static Class<?> defined;

    static final class Definer extends ClassLoader {
        Definer() {
            super(OddJavaNames.class.getClassLoader());
        }

        Class<?> define(String name, byte[] bytes) {
            return defineClass(name, bytes, 0, bytes.length);
        }
    }

    public static void main(String[] args) throws Exception {
        byte[] template;
        try (InputStream in = OddJavaNames.class.getResourceAsStream("OddNameODD.class")) {
            template = in.readAllBytes();
        }
        Class<?> c = new Definer().define("profrj.harness.OddName" + W, rename(template));
        defined = c;
        // Initialised here, so its LOCK is main's object on every JDK.
        Class.forName(c.getName(), true, c.getClassLoader());
        Method work = c.getMethod("work" + W, long.class);
        Method hold = c.getMethod("hold" + W, int.class);
        Thread odd = new Thread(() -> {
            call(hold, 100);
            call(work, 400L);
        }, "odd-" + W + "-thread");
        Thread holder = new Thread(() -> call(hold, 100), "holder");
        // main holds the monitor until the odd thread waits for it: one
        // contended wait under its name by construction, whatever the load.
        Field lockField = c.getDeclaredField("LOCK");
        lockField.setAccessible(true);
        Object lock = lockField.get(null);
        synchronized (lock) {
            odd.start();
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (odd.getState() != Thread.State.BLOCKED && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
        }
        holder.start();
        odd.join();
        holder.join();
        System.out.println("ran " + c.getName().equals("profrj.harness.OddName" + W));
    }

    static void call(Method m, Object arg) {
        try {
            m.invoke(null, arg);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The class file with "ODD" replaced by W in every CONSTANT_Utf8 (modified UTF-8 both ways). */
    static byte[] rename(byte[] bytes) throws IOException {
        DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(bytes));
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(buf);
        out.writeInt(in.readInt());
        out.writeInt(in.readInt());
        int count = in.readUnsignedShort();
        out.writeShort(count);
        for (int i = 1; i < count; i++) {
            int tag = in.readUnsignedByte();
            out.writeByte(tag);
            int size;
            switch (tag) {
                case 1:
                    out.writeUTF(in.readUTF().replace("ODD", W));
                    continue;
                case 7: case 8: case 16: case 19: case 20:
                    size = 2;
                    break;
                case 15:
                    size = 3;
                    break;
                case 3: case 4: case 9: case 10: case 11: case 12: case 17: case 18:
                    size = 4;
                    break;
                case 5: case 6:
                    size = 8;
                    i++;
                    break;
                default:
                    throw new IOException("constant pool tag " + tag);
            }
            byte[] b = new byte[size];
            in.readFully(b);
            out.write(b);
        }
        out.write(in.readAllBytes());
        return buf.toByteArray();
    }
}
