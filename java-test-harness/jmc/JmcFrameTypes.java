import java.io.File;
import java.util.Map;
import java.util.TreeMap;

import org.openjdk.jmc.common.IMCFrame;
import org.openjdk.jmc.common.IMCStackTrace;
import org.openjdk.jmc.common.item.IItem;
import org.openjdk.jmc.common.item.IItemCollection;
import org.openjdk.jmc.common.item.IItemIterable;
import org.openjdk.jmc.common.item.IMemberAccessor;
import org.openjdk.jmc.common.item.IType;
import org.openjdk.jmc.flightrecorder.JfrAttributes;
import org.openjdk.jmc.flightrecorder.JfrLoaderToolkit;

/**
 * Loads a recording with JDK Mission Control's parser and prints how its
 * sample events' frames ran, as JMC understands each frame's type: one line
 * {@code frame CLASS.METHOD DEPTH TYPE COUNT} per method, depth from the
 * top (0) and type, summed over the jdk.ExecutionSample and
 * profiler.WallClockSample events. TYPE is the name of JMC's own
 * {@code IMCFrame.Type} constant the frame's type resolved to
 * (INTERPRETED, JIT_COMPILED, INLINED, NATIVE, CPP, KERNEL), or
 * {@code other:NAME} for a type JMC does not know.
 */
public class JmcFrameTypes {
    public static void main(String[] args) throws Exception {
        IItemCollection items = JfrLoaderToolkit.loadEvents(new File(args[0]));
        Map<String, Long> counts = new TreeMap<>();
        for (IItemIterable it : items) {
            IType<IItem> type = it.getType();
            String name = type.getIdentifier();
            if (!name.equals("jdk.ExecutionSample") && !name.equals("profiler.WallClockSample")) {
                continue;
            }
            IMemberAccessor<IMCStackTrace, IItem> stackOf = JfrAttributes.EVENT_STACKTRACE.getAccessor(type);
            for (IItem item : it) {
                IMCStackTrace st = stackOf.getMember(item);
                if (st == null) {
                    continue;
                }
                int depth = 0;
                for (IMCFrame f : st.getFrames()) {
                    String m = f.getMethod().getType().getFullName() + "." + f.getMethod().getMethodName();
                    counts.merge(m + " " + depth + " " + typeName(f.getType()), 1L, Long::sum);
                    depth++;
                }
            }
        }
        for (Map.Entry<String, Long> e : counts.entrySet()) {
            System.out.println("frame " + e.getKey() + " " + e.getValue());
        }
    }

    static String typeName(IMCFrame.Type t) {
        IMCFrame.Type[] known = {IMCFrame.Type.INTERPRETED, IMCFrame.Type.JIT_COMPILED,
            IMCFrame.Type.INLINED, IMCFrame.Type.NATIVE, IMCFrame.Type.CPP, IMCFrame.Type.KERNEL};
        String[] names = {"INTERPRETED", "JIT_COMPILED", "INLINED", "NATIVE", "CPP", "KERNEL"};
        for (int i = 0; i < known.length; i++) {
            if (known[i] == t) {
                return names[i];
            }
        }
        return "other:" + (t == null ? "null" : t.getName());
    }
}
