//! Every type profrj writes, in the order the metadata event declares them:
//! the JDK's primitive and pool types, profrj's events and the annotation
//! types. Apart because it is a long table that changes only when an event
//! is added; the builders it uses are in `describe`.

use super::describe::{
    ann, annotation_type, class, cp, duration, event, field, plain, start_time, value_field,
};
use super::{id, name};
use crate::metadata::{ClassDesc, FieldDesc};

/// Every type profrj writes, for the metadata event.
pub fn classes() -> Vec<ClassDesc> {
    use id::*;
    let bytes = || vec![ann(DATA_AMOUNT, Some("BYTES"))];
    let millis = || vec![ann(TIMESTAMP, Some("MILLISECONDS_SINCE_EPOCH"))];
    let stack_frames = FieldDesc {
        array: true,
        ..field("frames", STACK_FRAME, "Stack Frames", Vec::new())
    };
    vec![
        plain(BOOLEAN, "boolean"),
        plain(INT, "int"),
        plain(LONG, "long"),
        plain(STRING, "java.lang.String"),
        class(
            CLASS,
            "java.lang.Class",
            "Java Class",
            false,
            vec![
                cp("classLoader", CLASS_LOADER, "Class Loader"),
                cp("name", SYMBOL, "Name"),
                cp("package", PACKAGE, "Package"),
                field("modifiers", INT, "Access Modifiers", Vec::new()),
            ],
        ),
        class(
            THREAD,
            "java.lang.Thread",
            "Thread",
            false,
            vec![
                field("osName", STRING, "OS Thread Name", Vec::new()),
                field("osThreadId", LONG, "OS Thread Id", Vec::new()),
                field("javaName", STRING, "Java Thread Name", Vec::new()),
                field("javaThreadId", LONG, "Java Thread Id", Vec::new()),
            ],
        ),
        class(
            CLASS_LOADER,
            "jdk.types.ClassLoader",
            "Java Class Loader",
            false,
            vec![cp("type", CLASS, "Type"), cp("name", SYMBOL, "Name")],
        ),
        class(
            FRAME_TYPE,
            "jdk.types.FrameType",
            "Frame type",
            true,
            vec![field("description", STRING, "Description", Vec::new())],
        ),
        class(
            THREAD_STATE,
            "jdk.types.ThreadState",
            "Java Thread State",
            true,
            vec![field("name", STRING, "Name", Vec::new())],
        ),
        class(
            STACK_TRACE,
            "jdk.types.StackTrace",
            "Stacktrace",
            false,
            vec![
                field("truncated", BOOLEAN, "Truncated", Vec::new()),
                stack_frames,
            ],
        ),
        class(
            STACK_FRAME,
            "jdk.types.StackFrame",
            "Stack Frame",
            false,
            vec![
                cp("method", METHOD, "Java Method"),
                field("lineNumber", INT, "Line Number", Vec::new()),
                field("bytecodeIndex", INT, "Bytecode Index", Vec::new()),
                cp("type", FRAME_TYPE, "Frame Type"),
            ],
        ),
        class(
            METHOD,
            "jdk.types.Method",
            "Java Method",
            false,
            vec![
                cp("type", CLASS, "Type"),
                cp("name", SYMBOL, "Name"),
                cp("descriptor", SYMBOL, "Descriptor"),
                field("modifiers", INT, "Access Modifiers", Vec::new()),
                field("hidden", BOOLEAN, "Hidden", Vec::new()),
            ],
        ),
        class(
            PACKAGE,
            "jdk.types.Package",
            "Package",
            false,
            vec![cp("name", SYMBOL, "Name")],
        ),
        class(
            SYMBOL,
            "jdk.types.Symbol",
            "Symbol",
            true,
            vec![field("string", STRING, "String", Vec::new())],
        ),
        event(
            EXECUTION_SAMPLE,
            name::EXECUTION_SAMPLE,
            "Method Profiling Sample",
            &["Java Virtual Machine", "Profiling"],
            vec![
                start_time(),
                cp("sampledThread", THREAD, "Thread"),
                cp("stackTrace", STACK_TRACE, "Stack Trace"),
                cp("state", THREAD_STATE, "Thread State"),
            ],
        ),
        event(
            WALL_CLOCK_SAMPLE,
            name::WALL_CLOCK_SAMPLE,
            "Wall Clock Sample",
            &["Java Virtual Machine", "Profiling"],
            vec![
                start_time(),
                cp("sampledThread", THREAD, "Thread"),
                cp("stackTrace", STACK_TRACE, "Stack Trace"),
                cp("state", THREAD_STATE, "Thread State"),
                field("samples", INT, "Samples", vec![ann(UNSIGNED, None)]),
                field(
                    "timeSpan",
                    LONG,
                    "Time Span",
                    vec![ann(TIMESPAN, Some("TICKS"))],
                ),
            ],
        ),
        event(
            ALLOCATION_SAMPLE,
            name::ALLOCATION_SAMPLE,
            "Object Allocation Sample",
            &["Java Application"],
            vec![
                start_time(),
                cp("eventThread", THREAD, "Event Thread"),
                cp("stackTrace", STACK_TRACE, "Stack Trace"),
                cp("objectClass", CLASS, "Object Class"),
                field("weight", LONG, "Sample Weight", bytes()),
                field("allocationSize", LONG, "Allocation Size", bytes()),
            ],
        ),
        event(
            MONITOR_ENTER,
            name::MONITOR_ENTER,
            "Java Monitor Blocked",
            &["Java Application"],
            vec![
                start_time(),
                duration(),
                cp("eventThread", THREAD, "Event Thread"),
                cp("stackTrace", STACK_TRACE, "Stack Trace"),
                cp("monitorClass", CLASS, "Monitor Class"),
                cp("previousOwner", THREAD, "Previous Monitor Owner"),
                field(
                    "address",
                    LONG,
                    "Monitor Address",
                    vec![ann(MEMORY_ADDRESS, None)],
                ),
            ],
        ),
        event(
            THREAD_PARK,
            name::THREAD_PARK,
            "Java Thread Park",
            &["Java Application"],
            vec![
                start_time(),
                duration(),
                cp("eventThread", THREAD, "Event Thread"),
                cp("stackTrace", STACK_TRACE, "Stack Trace"),
                cp("parkedClass", CLASS, "Class Parked On"),
                field(
                    "timeout",
                    LONG,
                    "Park Timeout",
                    vec![ann(TIMESPAN, Some("NANOSECONDS"))],
                ),
                field("until", LONG, "Park Until", millis()),
                field(
                    "address",
                    LONG,
                    "Address of Object Parked",
                    vec![ann(MEMORY_ADDRESS, None)],
                ),
            ],
        ),
        event(
            JVM_INFORMATION,
            name::JVM_INFORMATION,
            "JVM Information",
            &["Java Virtual Machine"],
            vec![
                start_time(),
                field("jvmName", STRING, "JVM Name", Vec::new()),
                field("jvmVersion", STRING, "JVM Version", Vec::new()),
                field(
                    "jvmArguments",
                    STRING,
                    "JVM Command Line Arguments",
                    Vec::new(),
                ),
                field(
                    "jvmFlags",
                    STRING,
                    "JVM Settings File Arguments",
                    Vec::new(),
                ),
                field(
                    "javaArguments",
                    STRING,
                    "Java Application Arguments",
                    Vec::new(),
                ),
                field("jvmStartTime", LONG, "JVM Start Time", millis()),
                field("pid", LONG, "Process Identifier", Vec::new()),
            ],
        ),
        event(
            OS_INFORMATION,
            name::OS_INFORMATION,
            "OS Information",
            &["Operating System"],
            vec![
                start_time(),
                field("osVersion", STRING, "OS Version", Vec::new()),
            ],
        ),
        event(
            CPU_INFORMATION,
            name::CPU_INFORMATION,
            "CPU Information",
            &["Operating System", "Processor"],
            vec![
                start_time(),
                field("cpu", STRING, "Type", Vec::new()),
                field("description", STRING, "Description", Vec::new()),
                field("sockets", INT, "Sockets", vec![ann(UNSIGNED, None)]),
                field("cores", INT, "Cores", vec![ann(UNSIGNED, None)]),
                field(
                    "hwThreads",
                    INT,
                    "Hardware Threads",
                    vec![ann(UNSIGNED, None)],
                ),
            ],
        ),
        event(
            ACTIVE_RECORDING,
            name::ACTIVE_RECORDING,
            "Flight Recording",
            &["Flight Recorder"],
            vec![
                start_time(),
                field("id", LONG, "Id", Vec::new()),
                field("name", STRING, "Name", Vec::new()),
                field("destination", STRING, "Destination", Vec::new()),
                field(
                    "maxAge",
                    LONG,
                    "Max Age",
                    vec![ann(TIMESPAN, Some("MILLISECONDS"))],
                ),
                field("maxSize", LONG, "Max Size", bytes()),
                field("recordingStart", LONG, "Start Time", millis()),
                field(
                    "recordingDuration",
                    LONG,
                    "Recording Duration",
                    vec![ann(TIMESPAN, Some("MILLISECONDS"))],
                ),
            ],
        ),
        annotation_type(LABEL, "jdk.jfr.Label", vec![value_field(false)]),
        annotation_type(CATEGORY, "jdk.jfr.Category", vec![value_field(true)]),
        annotation_type(TIMESTAMP, "jdk.jfr.Timestamp", vec![value_field(false)]),
        annotation_type(TIMESPAN, "jdk.jfr.Timespan", vec![value_field(false)]),
        annotation_type(DATA_AMOUNT, "jdk.jfr.DataAmount", vec![value_field(false)]),
        annotation_type(MEMORY_ADDRESS, "jdk.jfr.MemoryAddress", Vec::new()),
        annotation_type(UNSIGNED, "jdk.jfr.Unsigned", Vec::new()),
    ]
}

/// The metadata event for [`classes`]. Its id must not be one the JDK
/// uses for its own metadata (`jfr print` would mix them up).
pub fn metadata_event(start_ticks: u64) -> Vec<u8> {
    crate::metadata::metadata_event(&classes(), start_ticks, 0x7fff_fff0)
}
