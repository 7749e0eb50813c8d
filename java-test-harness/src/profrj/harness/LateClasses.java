package profrj.harness;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A target for attaching {@code memory} (tests/attach/modes.rs): classes loaded before the attach
 * cannot get a stamp field, those loaded after do. Loads {@code Before} and prints "ready"; once
 * the file "go" (beside the stop file, argument 1) exists, keeps 70 {@code Before}, 30 {@code
 * After} and 20 {@code AfterChild} (a subclass of {@code Before}, which must declare the field
 * itself), then creates "made"; exits once the stop file exists.
 */
public class LateClasses {
    static class Before {
        int v;
    }

    static final class After {
        long w;
    }

    static final class AfterChild extends Before {
        int u;
    }

    static final List<Object> KEEP = new ArrayList<>();

    static void waitFor(Path p) throws InterruptedException {
        while (!Files.exists(p)) {
            Thread.sleep(10);
        }
    }

    static void make() {
        for (int i = 0; i < 70; i++) {
            KEEP.add(new Before());
        }
        for (int i = 0; i < 30; i++) {
            KEEP.add(new After());
        }
        for (int i = 0; i < 20; i++) {
            KEEP.add(new AfterChild());
        }
    }

    public static void main(String[] args) throws Exception {
        Path stop = Path.of(args[0]);
        Path dir = stop.getParent();
        KEEP.add(new Before()); // loads the class (untracked: no session yet)
        KEEP.clear();
        System.out.println("ready");
        System.out.flush();
        waitFor(dir.resolve("go"));
        make(); // a method called after the attach: main's own frame keeps its old code
        Files.createFile(dir.resolve("made"));
        waitFor(stop);
        System.out.println("done " + KEEP.size());
    }
}
