import java.io.File;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

import org.netbeans.lib.profiler.heap.Heap;
import org.netbeans.lib.profiler.heap.HeapFactory;
import org.netbeans.lib.profiler.heap.Instance;
import org.netbeans.lib.profiler.heap.JavaClass;

/**
 * Sizes of a heap dump as NetBeans' heap library ({@code org.netbeans.lib.profiler.heap}, the
 * one VisualVM uses) computes them, for tests/heap_read and scripts/heapread-bench:
 *
 * <pre>
 * class NAME COUNT SHALLOW RETAINED    every class: instances, getAllInstancesSize,
 *                                      getRetainedSizeByClass (its dominator tree)
 * object ID NAME SIZE RETAINED         each instance of a class named on the command line:
 *                                      getSize, getRetainedSize
 * </pre>
 *
 * <p>Usage: {@code NetBeansRetained DUMP [--histogram] CLASS...}; {@code --histogram}: counts
 * and shallow sizes only (no dominator tree), for the benchmark.
 */
public class NetBeansRetained {
    public static void main(String[] args) throws Exception {
        Heap heap = HeapFactory.createHeap(new File(args[0]));
        boolean histogramOnly = args.length > 1 && args[1].equals("--histogram");
        Set<String> named = new HashSet<>(List.of(args).subList(histogramOnly ? 2 : 1, args.length));
        StringBuilder out = new StringBuilder();
        for (Object o : heap.getAllClasses()) {
            JavaClass c = (JavaClass) o;
            long retained = histogramOnly ? -1 : c.getRetainedSizeByClass();
            out.append("class ").append(c.getName()).append(' ').append(c.getInstancesCount())
                    .append(' ').append(c.getAllInstancesSize()).append(' ').append(retained)
                    .append('\n');
            if (!named.contains(c.getName())) {
                continue;
            }
            for (Iterator<?> it = c.getInstancesIterator(); it.hasNext(); ) {
                Instance i = (Instance) it.next();
                out.append("object ").append(Long.toUnsignedString(i.getInstanceId())).append(' ')
                        .append(c.getName()).append(' ').append(i.getSize()).append(' ')
                        .append(histogramOnly ? -1 : i.getRetainedSize()).append('\n');
            }
        }
        System.out.print(out);
    }
}
