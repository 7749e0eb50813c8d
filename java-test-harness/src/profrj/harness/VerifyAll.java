package profrj.harness;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.InputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * Verifies every class of a rewritten jar with the JVM's own verifier. Run with
 * -Xverify:all: VerifyAll REWRITTEN.jar ORIGINAL.jar [DEPENDENCY.jar ...]
 *
 * Each class is defined alone in a fresh loader whose parent sees the original
 * jar and its dependencies, then linked (reflection over its declared members
 * links it, and linking verifies). Defining a class beside its own original
 * can make a correct class fail (a signature naming it resolves to the
 * parent's copy), so every class is checked twice, original then rewrite, and
 * only a rewrite failing where its original passes counts against the rewriter.
 * Prints: "classes=N verified=V rewrite-errors=E harness-errors=H unresolved=U",
 * then the first rewrite errors.
 */
public class VerifyAll {
    static final class One extends ClassLoader {
        final String target;
        final byte[] bytes;

        One(ClassLoader parent, String target, byte[] bytes) {
            super(parent);
            this.target = target;
            this.bytes = bytes;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (name.equals(target)) {
                synchronized (getClassLoadingLock(name)) {
                    Class<?> c = findLoadedClass(name);
                    return c != null ? c : defineClass(name, bytes, 0, bytes.length);
                }
            }
            return super.loadClass(name, resolve);
        }
    }

    public static void main(String[] args) throws Exception {
        List<URL> urls = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            urls.add(new File(args[i]).toURI().toURL());
        }
        ClassLoader parent = new URLClassLoader(urls.toArray(new URL[0]), ClassLoader.getPlatformClassLoader());
        int classes = 0, verified = 0, rewriteErrors = 0, harnessErrors = 0, unresolved = 0;
        List<String> errors = new ArrayList<>();
        try (ZipFile jar = new ZipFile(args[0]); ZipFile original = new ZipFile(args[1])) {
            Enumeration<? extends ZipEntry> entries = jar.entries();
            while (entries.hasMoreElements()) {
                ZipEntry e = entries.nextElement();
                String n = e.getName();
                if (!n.endsWith(".class") || n.startsWith("META-INF/") || n.endsWith("module-info.class")) {
                    continue;
                }
                ZipEntry o = original.getEntry(n);
                if (o == null) {
                    continue;
                }
                classes++;
                String name = n.substring(0, n.length() - 6).replace('/', '.');
                String before = check(parent, name, read(original, o));
                String after = check(parent, name, read(jar, e));
                if (after == null) {
                    verified++;
                } else if (before == null && after.startsWith("verify")) {
                    rewriteErrors++;
                    if (errors.size() < 10) {
                        errors.add(name + ": " + after);
                    }
                } else if (before == null || before.startsWith("verify")) {
                    // The original fails the same way, or the rewrite met a loader
                    // constraint the original's check recorded: the harness, not the rewrite.
                    harnessErrors++;
                } else {
                    unresolved++; // a dependency is missing: not a verdict on the rewrite
                }
            }
        }
        System.out.println("classes=" + classes + " verified=" + verified + " rewrite-errors=" + rewriteErrors
                + " harness-errors=" + harnessErrors + " unresolved=" + unresolved);
        for (String s : errors) {
            System.out.println(s);
        }
    }

    static byte[] read(ZipFile jar, ZipEntry e) throws Exception {
        try (InputStream in = jar.getInputStream(e)) {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            in.transferTo(out);
            return out.toByteArray();
        }
    }

    /** null if `bytes` defines and links; else "verify: ..." or "linkage: ...". */
    static String check(ClassLoader parent, String name, byte[] bytes) {
        try {
            Class<?> c = new One(parent, name, bytes).loadClass(name);
            c.getDeclaredMethods(); // links, so verifies
            c.getDeclaredConstructors();
            return null;
        } catch (VerifyError | ClassFormatError err) {
            return "verify: " + err;
        } catch (LinkageError | ClassNotFoundException | SecurityException err) {
            return "linkage: " + err;
        }
    }
}
