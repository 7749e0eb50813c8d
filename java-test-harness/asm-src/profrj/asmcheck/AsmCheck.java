package profrj.asmcheck;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.InputStream;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.Type;
import org.objectweb.asm.tree.AbstractInsnNode;
import org.objectweb.asm.tree.ClassNode;
import org.objectweb.asm.tree.FrameNode;
import org.objectweb.asm.tree.LabelNode;
import org.objectweb.asm.tree.MethodNode;
import org.objectweb.asm.tree.TypeInsnNode;
import org.objectweb.asm.tree.analysis.Analyzer;
import org.objectweb.asm.tree.analysis.AnalyzerException;
import org.objectweb.asm.tree.analysis.BasicValue;
import org.objectweb.asm.tree.analysis.Frame;
import org.objectweb.asm.tree.analysis.SimpleVerifier;
import org.objectweb.asm.util.CheckClassAdapter;

/**
 * A second verifier for rewritten classes, where the JVM's cannot be used
 * (java.* classes cannot be defined in a fresh loader): ASM's
 * CheckClassAdapter (structure: instructions, labels, handlers, frames as
 * written) and, per method, ASM's Analyzer with a SimpleVerifier that
 * resolves the class hierarchy from the original classes, so merges and
 * assignments of reference types are checked. ASM's Analyzer infers types
 * and ignores the StackMapTable, so each frame of the table is also checked
 * against the inferred types at its instruction: every inferred value must be
 * assignable to the type the frame declares, as the JVM's type checker
 * requires (interfaces accept any reference, as in the JVM).
 *
 * Usage: AsmCheck REWRITTEN.jar (jrt | ORIGINAL.jar [DEPENDENCY.jar ...]) [--sample N]
 * With `jrt`, entries are named MODULE/pkg/Cls.class and the hierarchy (and
 * the originals) come from the running JDK's image (run it with
 * --add-modules ALL-SYSTEM). --sample N checks every N-th class only.
 *
 * A method failing in its rewrite is checked in its original too; only a
 * rewrite failing where the original passes counts as a failure. Prints
 * "classes=C methods=M frames=F failures=X original-failures=O unresolved=U
 * (failures: analyzer=A frame=R structure=S)", then the first failures.
 */
public class AsmCheck {
    /** SimpleVerifier with its subtype test exposed, for the frame checks. */
    static final class Verifier extends SimpleVerifier {
        Verifier(ClassNode cn, ClassLoader loader) {
            super(Opcodes.ASM9, Type.getObjectType(cn.name),
                    cn.superName == null ? null : Type.getObjectType(cn.superName), interfaces(cn),
                    (cn.access & Opcodes.ACC_INTERFACE) != 0);
            setClassLoader(loader);
        }

        boolean assignable(BasicValue value, Type declared) {
            return isSubTypeOf(value, newValue(declared));
        }
    }

    static List<Type> interfaces(ClassNode cn) {
        List<Type> out = new ArrayList<>();
        for (String i : cn.interfaces) {
            out.add(Type.getObjectType(i));
        }
        return out;
    }

    static int classes, methods, frames, failures, originalFailures, unresolved;
    /** Failures by what found them: the Analyzer, the frame check, CheckClassAdapter. */
    static int analyzerFailures, frameFailures, structureFailures;
    static final List<String> messages = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        int sample = 1;
        List<String> rest = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--sample")) {
                sample = Integer.parseInt(args[++i]);
            } else {
                rest.add(args[i]);
            }
        }
        boolean jrt = rest.get(1).equals("jrt");
        ClassLoader loader;
        ZipFile originalJar = null;
        FileSystem image = null;
        if (jrt) {
            loader = ClassLoader.getSystemClassLoader();
            image = FileSystems.getFileSystem(URI.create("jrt:/"));
        } else {
            List<URL> urls = new ArrayList<>();
            for (int i = 1; i < rest.size(); i++) {
                urls.add(new File(rest.get(i)).toURI().toURL());
            }
            loader = new URLClassLoader(urls.toArray(new URL[0]), ClassLoader.getPlatformClassLoader());
            originalJar = new ZipFile(rest.get(1));
        }
        try (ZipFile jar = new ZipFile(rest.get(0))) {
            Enumeration<? extends ZipEntry> entries = jar.entries();
            int n = 0;
            while (entries.hasMoreElements()) {
                ZipEntry e = entries.nextElement();
                String name = e.getName();
                if (!name.endsWith(".class") || name.endsWith("module-info.class") || name.startsWith("META-INF/")) {
                    continue;
                }
                if (n++ % sample != 0) {
                    continue;
                }
                byte[] original;
                if (jrt) {
                    original = Files.readAllBytes(image.getPath("/modules/" + name));
                } else {
                    ZipEntry o = originalJar.getEntry(name);
                    if (o == null) {
                        continue;
                    }
                    original = read(originalJar, o);
                }
                classes++;
                check(name, read(jar, e), original, loader);
            }
        }
        System.out.println("classes=" + classes + " methods=" + methods + " frames=" + frames + " failures=" + failures
                + " original-failures=" + originalFailures + " unresolved=" + unresolved + " (failures: analyzer="
                + analyzerFailures + " frame=" + frameFailures + " structure=" + structureFailures + ")");
        for (String m : messages) {
            System.out.println(m);
        }
    }

    static byte[] read(ZipFile jar, ZipEntry e) throws Exception {
        try (InputStream in = jar.getInputStream(e)) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            in.transferTo(out);
            return out.toByteArray();
        }
    }

    static ClassNode node(byte[] bytes) {
        ClassNode cn = new ClassNode();
        // CheckClassAdapter checks the structure as the class is read (frames
        // expanded, so each carries its full types).
        new ClassReader(bytes).accept(new CheckClassAdapter(Opcodes.ASM9, cn, false) {}, ClassReader.EXPAND_FRAMES);
        return cn;
    }

    static void check(String name, byte[] rewritten, byte[] original, ClassLoader loader) {
        ClassNode cn;
        try {
            cn = node(rewritten);
        } catch (RuntimeException err) {
            try {
                node(original);
            } catch (RuntimeException same) {
                // CheckClassAdapter rejects the original too (e.g. the JDK's
                // $Holder classes' access flags): analyze the methods anyway.
                originalFailure(name + ": structure: " + same);
                cn = new ClassNode();
                new ClassReader(rewritten).accept(cn, ClassReader.EXPAND_FRAMES);
                check(name, cn, original, loader);
                return;
            }
            fail(name + ": structure: " + err);
            return;
        }
        check(name, cn, original, loader);
    }

    static void check(String name, ClassNode cn, byte[] original, ClassLoader loader) {
        Map<String, MethodNode> originals = null;
        for (MethodNode m : cn.methods) {
            if (m.instructions.size() == 0) {
                continue;
            }
            methods++;
            String why;
            try {
                why = analyze(cn, m, loader);
            } catch (RuntimeException | LinkageError err) {
                if (isUnresolved(err)) {
                    unresolved++;
                    continue;
                }
                why = err.toString();
            }
            if (why == null) {
                continue;
            }
            if (originals == null) {
                originals = new HashMap<>();
                ClassNode on = new ClassNode();
                new ClassReader(original).accept(on, ClassReader.EXPAND_FRAMES);
                for (MethodNode o : on.methods) {
                    originals.put(o.name + o.desc, o);
                }
            }
            String before;
            try {
                before = analyze(cn, originals.get(m.name + m.desc), loader);
            } catch (RuntimeException | LinkageError err) {
                before = err.toString();
            }
            if (before != null) {
                originalFailure(name + " " + m.name + m.desc + ": " + before);
            } else {
                fail(name + " " + m.name + m.desc + ": " + why);
            }
        }
    }

    static boolean isUnresolved(Throwable err) {
        for (Throwable t = err; t != null; t = t.getCause()) {
            if (t instanceof ClassNotFoundException || t instanceof NoClassDefFoundError) {
                return true;
            }
        }
        return false;
    }

    /** Failing in the original too: ASM's limits, not the rewriter's. */
    static void originalFailure(String message) {
        originalFailures++;
        if (messages.size() < 40) {
            messages.add("(original fails too) " + message);
        }
    }

    static void fail(String message) {
        failures++;
        if (message.contains(": analyzer: ")) {
            analyzerFailures++;
        } else if (message.contains(": frame before ")) {
            frameFailures++;
        } else {
            structureFailures++;
        }
        if (messages.size() < 20) {
            messages.add(message);
        }
    }

    /** null if method `m` of `cn` passes; else why not. */
    static String analyze(ClassNode cn, MethodNode m, ClassLoader loader) {
        Verifier v = new Verifier(cn, loader);
        Frame<BasicValue>[] inferred;
        try {
            inferred = new Analyzer<>(v).analyze(cn.name, m);
        } catch (AnalyzerException e) {
            if (isUnresolved(e)) {
                throw new RuntimeException(e);
            }
            return "analyzer: " + e.getMessage();
        }
        for (int k = 0; k < m.instructions.size(); k++) {
            AbstractInsnNode insn = m.instructions.get(k);
            if (!(insn instanceof FrameNode) || inferred[k] == null) {
                continue; // not a frame, or unreachable code
            }
            frames++;
            String why = frameMismatch(v, m, (FrameNode) insn, inferred[k]);
            if (why != null) {
                return "frame before instruction " + k + ": " + why;
            }
        }
        return null;
    }

    /** null if every value inferred at the frame is assignable to its declared type. */
    static String frameMismatch(Verifier v, MethodNode m, FrameNode f, Frame<BasicValue> at) {
        int slot = 0;
        for (Object t : f.local == null ? List.of() : f.local) {
            if (slot >= at.getLocals()) {
                return "local " + slot + " past max_locals";
            }
            String why = mismatch(v, m, t, at.getLocal(slot));
            if (why != null) {
                return "local " + slot + ": " + why;
            }
            slot += (t == Opcodes.LONG || t == Opcodes.DOUBLE) ? 2 : 1;
        }
        int declared = f.stack == null ? 0 : f.stack.size();
        if (declared != at.getStackSize()) {
            return "stack of " + declared + " values declared, " + at.getStackSize() + " inferred";
        }
        for (int i = 0; i < declared; i++) {
            String why = mismatch(v, m, f.stack.get(i), at.getStack(i));
            if (why != null) {
                return "stack " + i + ": " + why;
            }
        }
        return null;
    }

    static String mismatch(Verifier v, MethodNode m, Object declared, BasicValue value) {
        Type want;
        if (declared == Opcodes.TOP) {
            return null;
        } else if (declared == Opcodes.INTEGER) {
            want = Type.INT_TYPE;
        } else if (declared == Opcodes.FLOAT) {
            want = Type.FLOAT_TYPE;
        } else if (declared == Opcodes.LONG) {
            want = Type.LONG_TYPE;
        } else if (declared == Opcodes.DOUBLE) {
            want = Type.DOUBLE_TYPE;
        } else if (declared == Opcodes.NULL) {
            boolean isNull = value.getType() != null && value.getType().getSort() == Type.OBJECT
                    && value.getType().getInternalName().equals("null");
            return isNull ? null : "null declared, " + value + " inferred";
        } else if (declared == Opcodes.UNINITIALIZED_THIS || declared instanceof LabelNode) {
            // ASM's Analyzer does not track initialization: require a reference
            // (of the `new`'s class for an uninitialized object).
            if (value.getType() == null || !value.isReference()) {
                return "uninitialized declared, " + value + " inferred";
            }
            if (declared instanceof LabelNode) {
                AbstractInsnNode n = (LabelNode) declared;
                while (n != null && n.getOpcode() < 0) {
                    n = n.getNext();
                }
                if (!(n instanceof TypeInsnNode) || n.getOpcode() != Opcodes.NEW) {
                    return "uninitialized(label) names no `new`";
                }
                want = Type.getObjectType(((TypeInsnNode) n).desc);
                return v.assignable(value, want) ? null : want + " (uninitialized) declared, " + value + " inferred";
            }
            return null;
        } else if (declared instanceof String) {
            want = Type.getObjectType((String) declared);
        } else {
            return "unknown frame type " + declared;
        }
        if (value.getType() == null) {
            return want + " declared, nothing usable inferred";
        }
        return v.assignable(value, want) ? null : want + " declared, " + value + " inferred";
    }
}
