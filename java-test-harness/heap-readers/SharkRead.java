import java.io.File;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import shark.CloseableHeapGraph;
import shark.GcRoot;
import shark.HeapField;
import shark.HeapGraph;
import shark.HeapObject;
import shark.HprofHeader;
import shark.HprofHeapGraph;
import shark.HprofRecord;
import shark.HprofRecord.HeapDumpRecord.ObjectRecord.PrimitiveArrayDumpRecord;
import shark.HprofRecordTag;
import shark.StreamingHprofReader;
import shark.ValueHolder;

/**
 * Reads a heap dump with Square's Shark (LeakCanary's heap library): its heap graph
 * ({@code HprofHeapGraph}) for the objects, their fields and array elements, and its record
 * stream ({@code StreamingHprofReader}) for what the graph does not index, the stack traces and
 * their frames. Prints the text tests/common/heap_readers.rs parses (its module comment says
 * the lines): every class's count, each object of a class named on the command line with its
 * fields or elements and its stack-trace serial (from its own record), every trace, and the
 * thread serials of the dump's thread roots with their threads' names.
 *
 * <p>Usage: {@code SharkRead DUMP CLASS...}. A dump Shark cannot read is an exception: the JVM
 * exits non-zero.
 */
public class SharkRead {
    public static void main(String[] args) throws Exception {
        File dump = new File(args[0]);
        Set<String> named = new HashSet<>(List.of(args).subList(1, args.length));
        // The thread roots are indexed so their serials can be named.
        try (CloseableHeapGraph graph = HprofHeapGraph.Companion.openHeapGraph(
                dump, null, EnumSet.of(HprofRecordTag.ROOT_THREAD_OBJECT))) {
            objects(graph, named);
            threads(graph);
            traces(dump, graph);
        }
    }

    static void objects(HeapGraph graph, Set<String> named) {
        Map<String, long[]> counts = new TreeMap<>(); // class -> {objects, elements}
        for (Iterator<HeapObject.HeapInstance> it = graph.getInstances().iterator(); it.hasNext(); ) {
            HeapObject.HeapInstance o = it.next();
            String c = o.getInstanceClassName();
            counts.computeIfAbsent(c, k -> new long[] {0, -1})[0]++;
            if (named.contains(c)) {
                HprofRecord.HeapDumpRecord.ObjectRecord.InstanceDumpRecord r = o.readRecord();
                System.out.println("object " + id(o.getObjectId()) + " " + c + " "
                        + r.getStackTraceSerialNumber());
                for (Iterator<HeapField> f = o.readFields().iterator(); f.hasNext(); ) {
                    HeapField field = f.next();
                    ValueHolder v = field.getValue().getHolder();
                    System.out.println("field " + id(o.getObjectId()) + " " + field.getName() + " "
                            + type(v) + " " + value(graph, v));
                }
            }
        }
        for (Iterator<HeapObject.HeapObjectArray> it = graph.getObjectArrays().iterator(); it.hasNext(); ) {
            HeapObject.HeapObjectArray a = it.next();
            String c = a.getArrayClassName();
            HprofRecord.HeapDumpRecord.ObjectRecord.ObjectArrayDumpRecord r = a.readRecord();
            long[] n = counts.computeIfAbsent(c, k -> new long[] {0, 0});
            n[0]++;
            n[1] += r.getElementIds().length;
            if (named.contains(c)) {
                StringBuilder line = new StringBuilder("array " + id(a.getObjectId()) + " " + c + " "
                        + r.getElementIds().length + " " + r.getStackTraceSerialNumber());
                for (long e : r.getElementIds()) {
                    line.append(' ').append(ref(graph, e));
                }
                System.out.println(line);
            }
        }
        for (Iterator<HeapObject.HeapPrimitiveArray> it = graph.getPrimitiveArrays().iterator(); it.hasNext(); ) {
            HeapObject.HeapPrimitiveArray a = it.next();
            String c = a.getArrayClassName();
            PrimitiveArrayDumpRecord r = a.readRecord();
            long[] n = counts.computeIfAbsent(c, k -> new long[] {0, 0});
            n[0]++;
            n[1] += r.getSize();
            if (named.contains(c)) {
                StringBuilder line = new StringBuilder("array " + id(a.getObjectId()) + " " + c + " "
                        + r.getSize() + " " + r.getStackTraceSerialNumber());
                for (String e : elements(r)) {
                    line.append(' ').append(e);
                }
                System.out.println(line);
            }
        }
        for (Map.Entry<String, long[]> e : counts.entrySet()) {
            System.out.println("count " + e.getKey() + " " + e.getValue()[0]);
            if (e.getValue()[1] >= 0) {
                System.out.println("elements " + e.getKey() + " " + e.getValue()[1]);
            }
        }
    }

    /** Each thread root's serial and its thread's name (java.lang.Thread's field). */
    static void threads(HeapGraph graph) {
        for (GcRoot root : graph.getGcRoots()) {
            if (root instanceof GcRoot.ThreadObject) {
                GcRoot.ThreadObject t = (GcRoot.ThreadObject) root;
                HeapObject o = graph.findObjectByIdOrNull(t.getId());
                HeapField name = o == null || o.getAsInstance() == null
                        ? null : o.getAsInstance().get("java.lang.Thread", "name");
                String text = name == null ? null : name.getValue().readAsJavaString();
                System.out.println("thread " + t.getThreadSerialNumber() + " "
                        + (text == null ? "-" : text));
            }
        }
    }

    /**
     * Every STACK TRACE record and its frames, through Shark's record stream: the strings,
     * classes (by serial) and frames are gathered first, in one pass; a frame's class is named by
     * the graph, as its objects' classes are.
     */
    static void traces(File dump, HeapGraph graph) {
        Map<Long, String> strings = new HashMap<>();
        Map<Integer, Long> classBySerial = new HashMap<>();
        Map<Long, HprofRecord.StackFrameRecord> frames = new HashMap<>();
        List<HprofRecord.StackTraceRecord> traces = new ArrayList<>();
        StreamingHprofReader.Companion.readerFor(dump, HprofHeader.Companion.parseHeaderOf(dump)).readRecords(
                EnumSet.of(HprofRecordTag.STRING_IN_UTF8, HprofRecordTag.LOAD_CLASS,
                        HprofRecordTag.STACK_FRAME, HprofRecordTag.STACK_TRACE),
                (tag, length, reader) -> {
                    switch (tag) {
                        case STRING_IN_UTF8: {
                            HprofRecord.StringRecord s = reader.readStringRecord(length);
                            strings.put(s.getId(), s.getString());
                            break;
                        }
                        case LOAD_CLASS: {
                            HprofRecord.LoadClassRecord c = reader.readLoadClassRecord();
                            classBySerial.put(c.getClassSerialNumber(), c.getId());
                            break;
                        }
                        case STACK_FRAME: {
                            HprofRecord.StackFrameRecord f = reader.readStackFrameRecord();
                            frames.put(f.getId(), f);
                            break;
                        }
                        case STACK_TRACE:
                            traces.add(reader.readStackTraceRecord());
                            break;
                        default:
                            throw new IllegalStateException("record " + tag + " not asked for");
                    }
                });
        for (HprofRecord.StackTraceRecord t : traces) {
            System.out.println("trace " + t.getStackTraceSerialNumber() + " "
                    + t.getThreadSerialNumber() + " " + t.getStackFrameIds().length);
            for (long frameId : t.getStackFrameIds()) {
                HprofRecord.StackFrameRecord f = frames.get(frameId);
                if (f == null) {
                    throw new IllegalStateException("trace " + t.getStackTraceSerialNumber()
                            + " names frame " + frameId + ", which the dump lacks");
                }
                Long classId = classBySerial.get(f.getClassSerialNumber());
                HeapObject c = classId == null ? null : graph.findObjectByIdOrNull(classId);
                String file = strings.get(f.getSourceFileNameStringId());
                System.out.println("frame " + t.getStackTraceSerialNumber() + " "
                        + (c == null || c.getAsClass() == null ? "-" : c.getAsClass().getName()) + " "
                        + strings.getOrDefault(f.getMethodNameStringId(), "-") + " "
                        + (file == null || file.isEmpty() ? "-" : file) + " "
                        + f.getLineNumber());
            }
        }
    }

    static String id(long id) {
        return Long.toUnsignedString(id);
    }

    static String type(ValueHolder v) {
        if (v instanceof ValueHolder.ReferenceHolder) return "object";
        if (v instanceof ValueHolder.BooleanHolder) return "boolean";
        if (v instanceof ValueHolder.CharHolder) return "char";
        if (v instanceof ValueHolder.ByteHolder) return "byte";
        if (v instanceof ValueHolder.ShortHolder) return "short";
        if (v instanceof ValueHolder.IntHolder) return "int";
        if (v instanceof ValueHolder.LongHolder) return "long";
        if (v instanceof ValueHolder.FloatHolder) return "float";
        if (v instanceof ValueHolder.DoubleHolder) return "double";
        throw new IllegalStateException("value " + v);
    }

    static String value(HeapGraph graph, ValueHolder v) {
        if (v instanceof ValueHolder.ReferenceHolder) {
            return ref(graph, ((ValueHolder.ReferenceHolder) v).getValue());
        }
        if (v instanceof ValueHolder.BooleanHolder) return String.valueOf(((ValueHolder.BooleanHolder) v).getValue());
        if (v instanceof ValueHolder.CharHolder) return String.valueOf((int) ((ValueHolder.CharHolder) v).getValue());
        if (v instanceof ValueHolder.ByteHolder) return String.valueOf(((ValueHolder.ByteHolder) v).getValue());
        if (v instanceof ValueHolder.ShortHolder) return String.valueOf(((ValueHolder.ShortHolder) v).getValue());
        if (v instanceof ValueHolder.IntHolder) return String.valueOf(((ValueHolder.IntHolder) v).getValue());
        if (v instanceof ValueHolder.LongHolder) return String.valueOf(((ValueHolder.LongHolder) v).getValue());
        if (v instanceof ValueHolder.FloatHolder) return String.valueOf(((ValueHolder.FloatHolder) v).getValue());
        if (v instanceof ValueHolder.DoubleHolder) return String.valueOf(((ValueHolder.DoubleHolder) v).getValue());
        throw new IllegalStateException("value " + v);
    }

    /** A reference: {@code null}, or {@code @ID:CLASS} (CLASS {@code ?} if the dump lacks it). */
    static String ref(HeapGraph graph, long id) {
        if (id == ValueHolder.NULL_REFERENCE) {
            return "null";
        }
        HeapObject o = graph.findObjectByIdOrNull(id);
        String c;
        if (o == null) {
            c = "?";
        } else if (o.getAsInstance() != null) {
            c = o.getAsInstance().getInstanceClassName();
        } else if (o.getAsObjectArray() != null) {
            c = o.getAsObjectArray().getArrayClassName();
        } else if (o.getAsPrimitiveArray() != null) {
            c = o.getAsPrimitiveArray().getArrayClassName();
        } else {
            c = "java.lang.Class";
        }
        return "@" + id(id) + ":" + c;
    }

    /** A primitive array's elements as the other reader prints them (a char as its code). */
    static List<String> elements(PrimitiveArrayDumpRecord r) {
        List<String> out = new ArrayList<>(r.getSize());
        if (r instanceof PrimitiveArrayDumpRecord.BooleanArrayDump) {
            for (boolean v : ((PrimitiveArrayDumpRecord.BooleanArrayDump) r).getArray()) out.add(String.valueOf(v));
        } else if (r instanceof PrimitiveArrayDumpRecord.CharArrayDump) {
            for (char v : ((PrimitiveArrayDumpRecord.CharArrayDump) r).getArray()) out.add(String.valueOf((int) v));
        } else if (r instanceof PrimitiveArrayDumpRecord.ByteArrayDump) {
            for (byte v : ((PrimitiveArrayDumpRecord.ByteArrayDump) r).getArray()) out.add(String.valueOf(v));
        } else if (r instanceof PrimitiveArrayDumpRecord.ShortArrayDump) {
            for (short v : ((PrimitiveArrayDumpRecord.ShortArrayDump) r).getArray()) out.add(String.valueOf(v));
        } else if (r instanceof PrimitiveArrayDumpRecord.IntArrayDump) {
            for (int v : ((PrimitiveArrayDumpRecord.IntArrayDump) r).getArray()) out.add(String.valueOf(v));
        } else if (r instanceof PrimitiveArrayDumpRecord.LongArrayDump) {
            for (long v : ((PrimitiveArrayDumpRecord.LongArrayDump) r).getArray()) out.add(String.valueOf(v));
        } else if (r instanceof PrimitiveArrayDumpRecord.FloatArrayDump) {
            for (float v : ((PrimitiveArrayDumpRecord.FloatArrayDump) r).getArray()) out.add(String.valueOf(v));
        } else if (r instanceof PrimitiveArrayDumpRecord.DoubleArrayDump) {
            for (double v : ((PrimitiveArrayDumpRecord.DoubleArrayDump) r).getArray()) out.add(String.valueOf(v));
        } else {
            throw new IllegalStateException("array record " + r);
        }
        return out;
    }
}
