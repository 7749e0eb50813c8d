import java.io.File;
import java.util.Map;
import java.util.TreeMap;

import org.openjdk.jmc.common.IMCFrame;
import org.openjdk.jmc.common.IMCStackTrace;
import org.openjdk.jmc.common.item.IAttribute;
import org.openjdk.jmc.common.item.IItem;
import org.openjdk.jmc.common.item.IItemCollection;
import org.openjdk.jmc.common.item.IItemIterable;
import org.openjdk.jmc.common.item.IMemberAccessor;
import org.openjdk.jmc.common.item.IType;
import org.openjdk.jmc.common.unit.IQuantity;
import org.openjdk.jmc.flightrecorder.JfrAttributes;
import org.openjdk.jmc.flightrecorder.JfrLoaderToolkit;

/**
 * Loads a recording with JDK Mission Control's parser (the library JMC's
 * pages are built on) and prints, per event type, how many events it read,
 * how many carry a stack trace whose every frame names a method, and how
 * many frames it resolved; then the top frames of jdk.ExecutionSample with
 * their counts (the "hot methods" JMC shows), and the summed weight of
 * allocation samples and durations of lock events. A parse error is an
 * exception: the JVM exits non-zero.
 *
 * Output lines: {@code type NAME events N stacks S frames F unresolved U},
 * {@code top METHOD COUNT}, {@code weight NAME BYTES}, {@code duration NAME NS},
 * {@code attr NAME ATTRIBUTE VALUE} for the information events, and
 * {@code frametype COUNT METHOD TYPE} for the frames of execution samples
 * (TYPE as JMC names it, {@code JIT compiled} say).
 */
public class JmcRead {
    public static void main(String[] args) throws Exception {
        IItemCollection items = JfrLoaderToolkit.loadEvents(new File(args[0]));
        Map<String, long[]> perType = new TreeMap<>();
        Map<String, Long> top = new TreeMap<>();
        Map<String, Long> weights = new TreeMap<>();
        Map<String, Long> durations = new TreeMap<>();
        Map<String, Long> frameTypes = new TreeMap<>();
        for (IItemIterable it : items) {
            IType<IItem> type = it.getType();
            String name = type.getIdentifier();
            long[] c = perType.computeIfAbsent(name, k -> new long[4]);
            IMemberAccessor<IMCStackTrace, IItem> stackOf = JfrAttributes.EVENT_STACKTRACE.getAccessor(type);
            IMemberAccessor<IQuantity, IItem> weightOf = accessor(type, "weight");
            IMemberAccessor<IQuantity, IItem> durationOf = JfrAttributes.DURATION.getAccessor(type);
            for (IItem item : it) {
                c[0]++;
                IMCStackTrace st = stackOf == null ? null : stackOf.getMember(item);
                if (st != null) {
                    c[1]++;
                    for (IMCFrame f : st.getFrames()) {
                        c[2]++;
                        if (f.getMethod() == null || f.getMethod().getMethodName() == null
                                || f.getMethod().getType() == null) {
                            c[3]++;
                        }
                    }
                    if (name.equals("jdk.ExecutionSample")) {
                        for (IMCFrame f : st.getFrames()) {
                            if (f.getMethod() != null && f.getMethod().getType() != null) {
                                String m = f.getMethod().getType().getFullName() + "." + f.getMethod().getMethodName();
                                frameTypes.merge(m + " " + f.getType().getName(), 1L, Long::sum);
                            }
                        }
                    }
                    if (name.equals("jdk.ExecutionSample") && !st.getFrames().isEmpty()) {
                        IMCFrame f = st.getFrames().get(0);
                        String m = f.getMethod().getType().getFullName() + "." + f.getMethod().getMethodName();
                        top.merge(m, 1L, Long::sum);
                    }
                }
                if (weightOf != null) {
                    IQuantity w = weightOf.getMember(item);
                    if (w != null) {
                        weights.merge(name, w.longValue(), Long::sum);
                    }
                }
                if (durationOf != null) {
                    IQuantity d = durationOf.getMember(item);
                    if (d != null) {
                        durations.merge(name, d.clampedLongValueIn(
                                org.openjdk.jmc.common.unit.UnitLookup.NANOSECOND), Long::sum);
                    }
                }
                if (name.endsWith("Information") || name.equals("jdk.ActiveRecording")) {
                    for (IAttribute<?> a : type.getAttributes()) {
                        Object v = a.getAccessor(type).getMember(item);
                        System.out.println("attr " + name + " " + a.getIdentifier() + " " + v);
                    }
                }
            }
        }
        for (Map.Entry<String, long[]> e : perType.entrySet()) {
            long[] c = e.getValue();
            System.out.println("type " + e.getKey() + " events " + c[0] + " stacks " + c[1]
                    + " frames " + c[2] + " unresolved " + c[3]);
        }
        for (Map.Entry<String, Long> e : top.entrySet()) {
            System.out.println("top " + e.getKey() + " " + e.getValue());
        }
        for (Map.Entry<String, Long> e : weights.entrySet()) {
            System.out.println("weight " + e.getKey() + " " + e.getValue());
        }
        for (Map.Entry<String, Long> e : durations.entrySet()) {
            System.out.println("duration " + e.getKey() + " " + e.getValue());
        }
        for (Map.Entry<String, Long> e : frameTypes.entrySet()) {
            System.out.println("frametype " + e.getValue() + " " + e.getKey());
        }
    }

    @SuppressWarnings("unchecked")
    private static IMemberAccessor<IQuantity, IItem> accessor(IType<IItem> type, String id) {
        for (IAttribute<?> a : type.getAttributes()) {
            if (a.getIdentifier().equals(id)) {
                return (IMemberAccessor<IQuantity, IItem>) a.getAccessor(type);
            }
        }
        return null;
    }
}
