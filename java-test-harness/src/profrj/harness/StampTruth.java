package profrj.harness;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.ObjectStreamClass;
import java.io.Serializable;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;

/**
 * Ground truth for the memory mode's stamps (tests/memory.rs): classes of every shape the agent
 * gives a stamp field, or whose objects inherit one, each with a count known by construction.
 * What main keeps (its rows: count, max):
 *
 * <ul>
 *   <li>{@code Animal} (stamped, implements an interface with constants): 40 kept, 10 more from
 *       reflection: (50, 50);
 *   <li>{@code Dog} (inherits Animal's field): 25 kept; plus three waves of 300 made, held across
 *       a full GC and dropped one GC apart: (25, 325);
 *   <li>{@code Puppy} (two levels down): 12 kept; threads "pups-a" and "pups-b" keep 30 and 20:
 *       rows of their own;
 *   <li>{@code Counted} (extends the JDK's AbstractList, whose modCount field comes first): 9;
 *   <li>{@code Wide} (13 int fields, each holding a small number a stamp could be): 17;
 *   <li>{@code Sheep} (Cloneable): the original and 60 clones kept, all at the clone site but
 *       one: 61;
 *   <li>{@code Color} (an enum): its 3 constants, made by its static initializer on main: (3, 3);
 *   <li>{@code Point} (Serializable): 5 kept; 5 more deserialized copies are not counted (no
 *       constructor runs) and keep no stamp: (5, 5);
 *   <li>{@code Elsewhere}: 8 made by an excluded method (the test excludes {@code Maker}) are not
 *       counted: no row.
 * </ul>
 *
 * It also prints what reflection and serialization see of {@code Point}: its serialVersionUID,
 * its declared non-synthetic fields, and its synthetic ones, which the test compares with a run
 * without the agent.
 */
public class StampTruth {
    interface Named {
        String PREFIX = "n";
        int K = 7;
    }

    static class Animal implements Named {
        int legs;
        long born;
    }

    static class Dog extends Animal implements Comparable<Dog> {
        int tricks;
        double weight;

        @Override
        public int compareTo(Dog o) {
            return Integer.compare(tricks, o.tricks);
        }
    }

    static final class Puppy extends Dog {
        byte age;
    }

    static final class Counted extends java.util.AbstractList<Integer> {
        final int n;

        Counted(int n) {
            this.n = n;
        }

        @Override
        public Integer get(int i) {
            return i;
        }

        @Override
        public int size() {
            return n;
        }
    }

    static final class Wide {
        int a = 1, b = 2, c = 3, d = 4, e = 5, f = 6, g = 7, h = 8, i = 9, j = 10, k = 11, l = 12,
                m = 13;
    }

    static final class Sheep implements Cloneable {
        int wool;

        Sheep copy() throws CloneNotSupportedException {
            return (Sheep) clone();
        }
    }

    enum Color {
        RED,
        GREEN,
        BLUE
    }

    static final class Point implements Serializable {
        private static final long serialVersionUID_NOT = 0; // a static field: not the UID
        int x;
        int y;

        Point(int x, int y) {
            this.x = x;
            this.y = y;
        }
    }

    static final class Elsewhere {
        int v;
    }

    static final class Maker {
        static void make(List<Object> into, int n) {
            for (int i = 0; i < n; i++) {
                into.add(new Elsewhere());
            }
        }
    }

    static final List<Object> KEEP = new ArrayList<>();

    static void keepPuppies(int n, List<Object> into) {
        for (int i = 0; i < n; i++) {
            into.add(new Puppy());
        }
    }

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < 40; i++) {
            KEEP.add(new Animal());
        }
        for (int i = 0; i < 10; i++) {
            KEEP.add(Animal.class.getDeclaredConstructor().newInstance());
        }
        for (int i = 0; i < 25; i++) {
            KEEP.add(new Dog());
        }
        for (int i = 0; i < 12; i++) {
            KEEP.add(new Puppy());
        }
        for (int i = 0; i < 9; i++) {
            KEEP.add(new Counted(i));
        }
        for (int i = 0; i < 17; i++) {
            KEEP.add(new Wide());
        }
        Sheep dolly = new Sheep();
        KEEP.add(dolly);
        for (int i = 0; i < 60; i++) {
            KEEP.add(dolly.copy());
        }
        KEEP.add(Color.values());
        List<Object> a = new ArrayList<>();
        List<Object> b = new ArrayList<>();
        Thread ta = new Thread(() -> keepPuppies(30, a), "pups-a");
        Thread tb = new Thread(() -> keepPuppies(20, b), "pups-b");
        ta.start();
        tb.start();
        ta.join();
        tb.join();
        KEEP.add(a);
        KEEP.add(b);
        Maker.make(KEEP, 8);

        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            for (int i = 0; i < 5; i++) {
                Point p = new Point(i, -i);
                KEEP.add(p);
                out.writeObject(p);
            }
        }
        int sum = 0;
        try (ObjectInputStream in =
                new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray()))) {
            for (int i = 0; i < 5; i++) {
                Point p = (Point) in.readObject();
                KEEP.add(p);
                sum += p.x - p.y;
            }
        }

        for (int w = 0; w < 3; w++) {
            Dog[] wave = new Dog[300];
            for (int i = 0; i < wave.length; i++) {
                wave[i] = new Dog();
            }
            sum += wave.length;
            // Held across a full GC, then time for a profiler to read its end
            // (MemoryTruth.heldAcrossAFullGc).
            System.gc();
            Thread.sleep(500);
            wave = null;
            System.gc();
        }

        StringBuilder plain = new StringBuilder();
        StringBuilder synthetic = new StringBuilder();
        for (Field f : Point.class.getDeclaredFields()) {
            StringBuilder to = f.isSynthetic() ? synthetic : plain;
            to.append(Modifier.toString(f.getModifiers())).append(' ').append(f.getName()).append(';');
        }
        System.out.println("suid " + ObjectStreamClass.lookup(Point.class).getSerialVersionUID());
        System.out.println("fields " + plain);
        System.out.println("synthetic " + synthetic);
        System.out.println("kept " + KEEP.size() + " sum " + sum);
    }
}
