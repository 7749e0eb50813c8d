package profrj.harness;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * A heap of known size that stands still (scripts/census-pause): keeps N (argument 1) objects
 * of this program's own class (stamped under {@code memory}) and M (argument 2) {@code byte[16]}
 * arrays, prints "ready", then sleeps until the file named by argument 3 exists. What a census of
 * it costs is compared with HotSpot's own {@code GC.class_histogram} on the same heap.
 */
public class HeldSet {
    public static void main(String[] args) throws Exception {
        int items = Integer.parseInt(args[0]);
        int arrays = Integer.parseInt(args[1]);
        Path stop = Paths.get(args[2]);
        Object[] held = new Object[items + arrays];
        for (int i = 0; i < items; i++) {
            held[i] = new LiveChurn.Item(i); // the program's own class: stamped
        }
        for (int i = 0; i < arrays; i++) {
            held[items + i] = new byte[16];
        }
        System.out.println("ready");
        System.out.flush();
        while (!Files.exists(stop)) {
            Thread.sleep(50);
        }
        System.out.println("held=" + held.length);
    }
}
