package profrj.harness;

import java.io.InputStream;
import java.lang.invoke.MethodHandles;

/**
 * Threads whose names XML 1.0 cannot hold as they are: "odd\u0001one" (a
 * control character) and "\u001b[31mred\u001b[0m" (an ANSI colour escape
 * that would reach a terminal), "back\\slash", and names beyond the Basic
 * Multilingual Plane ("crab \uD83E\uDD80") or a lone surrogate
 * ("lone \uD800"). Each runs, ~200 ms of CPU, a class whose own name,
 * method name and source file hold U+0001, ESC, BEL and a backslash
 * ({@link OddNamesPayloadWXYZ}, renamed in its bytes), so the sampler sees
 * them all. The snapshot must stay well-formed and keep every name.
 */
public class OddNames {
    public static void main(String[] args) throws Exception {
        Runnable payload = oddPayload();
        String[] names = {
            "odd\u0001one", "\u001b[31mred\u001b[0m", "back\\slash", "crab \uD83E\uDD80", "lone \uD800"
        };
        Thread[] ts = new Thread[names.length];
        for (int i = 0; i < names.length; i++) {
            ts[i] = new Thread(payload, names[i]);
            ts[i].start();
        }
        for (Thread t : ts) {
            t.join();
        }
    }

    /** The payload class, renamed: "PayloadWXYZ" → "Payload" U+0001 ESC BEL '\'. */
    static Runnable oddPayload() throws Exception {
        byte[] bytes;
        try (InputStream in = OddNames.class.getResourceAsStream("OddNamesPayloadWXYZ.class")) {
            bytes = in.readAllBytes();
        }
        byte[] from = "PayloadWXYZ".getBytes("US-ASCII");
        byte[] to = {'P', 'a', 'y', 'l', 'o', 'a', 'd', 0x01, 0x1b, 0x07, '\\'};
        for (int i = 0; i + from.length <= bytes.length; i++) {
            boolean match = true;
            for (int k = 0; k < from.length && match; k++) {
                match = bytes[i + k] == from[k];
            }
            if (match) {
                System.arraycopy(to, 0, bytes, i, to.length);
            }
        }
        Class<?> c = MethodHandles.lookup().defineClass(bytes);
        return (Runnable) c.getDeclaredConstructor().newInstance();
    }
}
