package profrj.harness;

import java.nio.file.Files;
import java.nio.file.Paths;

/**
 * An application with its own SIGUSR1 handler (which writes the file
 * "usr1-received" in the working directory): the agent must leave it in place.
 * Prints "ready", then runs like LongRunning until the file named by argument 1 exists.
 */
public class OwnsUsr1 {
    public static void main(String[] args) throws Exception {
        sun.misc.Signal.handle(new sun.misc.Signal("USR1"), s -> {
            try {
                Files.write(Paths.get("usr1-received"), new byte[0]);
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
        LongRunning.main(args);
    }
}
