package profrj.harness;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * A target for attach tests: prints "ready", then runs CpuSplit's heavy()/light()
 * rounds until the file named by argument 1 exists, then prints "done" and exits.
 */
public class LongRunning {
    public static void main(String[] args) throws Exception {
        Path stop = Paths.get(args[0]);
        System.out.println("ready");
        System.out.flush();
        while (!Files.exists(stop)) {
            for (int i = 0; i < 20; i++) {
                CpuSplit.heavy();
                CpuSplit.light();
            }
        }
        System.out.println("done");
    }
}
