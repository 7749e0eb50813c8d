//! The Java runtime injected code calls: `profrj.runtime.Probe` and its
//! helpers, written in Java (`agent/java/profrj/runtime/`). Their class
//! files are committed (`agent/java/classes/`, made by
//! `scripts/refresh-runtime-classes`; `agent/tests/runtime_classes.rs`
//! keeps them equal to the sources), so the build needs no JDK. The agent
//! defines them in the boot class loader, so every class can see them, and
//! binds their natives with RegisterNatives. They are never instrumented
//! (the scope excludes `profrj.runtime.*`).

/// (internal name, class-file bytes), each after the classes it extends.
pub const CLASSES: &[(&str, &[u8])] = &[
    (
        "profrj/runtime/CloneKind",
        include_bytes!("../../java/classes/profrj/runtime/CloneKind.class"),
    ),
    (
        "profrj/runtime/TypeIds",
        include_bytes!("../../java/classes/profrj/runtime/TypeIds.class"),
    ),
    (
        "profrj/runtime/StampSetter",
        include_bytes!("../../java/classes/profrj/runtime/StampSetter.class"),
    ),
    (
        "profrj/runtime/Stamps$StampsLocal",
        include_bytes!("../../java/classes/profrj/runtime/Stamps$StampsLocal.class"),
    ),
    (
        "profrj/runtime/Stamps",
        include_bytes!("../../java/classes/profrj/runtime/Stamps.class"),
    ),
    (
        "profrj/runtime/StampCheck$Consts",
        include_bytes!("../../java/classes/profrj/runtime/StampCheck$Consts.class"),
    ),
    (
        STAMP_CHECK_BASE,
        include_bytes!("../../java/classes/profrj/runtime/StampCheck$Base.class"),
    ),
    (
        "profrj/runtime/StampCheck$Sub",
        include_bytes!("../../java/classes/profrj/runtime/StampCheck$Sub.class"),
    ),
    (
        STAMP_CHECK,
        include_bytes!("../../java/classes/profrj/runtime/StampCheck.class"),
    ),
    (
        "profrj/runtime/Probe",
        include_bytes!("../../java/classes/profrj/runtime/Probe.class"),
    ),
    (
        "profrj/runtime/Probe$Stripes",
        include_bytes!("../../java/classes/profrj/runtime/Probe$Stripes.class"),
    ),
];

/// Internal name of the class instrumented code calls.
pub const CLASS: &str = "profrj/runtime/Probe";
/// The memory mode's per-thread stamping (its `control` buffer).
pub const STAMPS: &str = "profrj/runtime/Stamps";
/// The check of the census, and the class of it that gets a stamp field
/// when it is defined, as an application's class would.
pub const STAMP_CHECK: &str = "profrj/runtime/StampCheck";
pub const STAMP_CHECK_BASE: &str = "profrj/runtime/StampCheck$Base";
/// The static field holding the coverage counter arrays, by id.
pub const COUNTERS_FIELD: (&str, &str) = ("COV", "[[J");
/// The method instrumented code calls at entry for its counter array.
pub const COUNTERS_METHOD: (&str, &str) = ("cov", "(I)[J");
/// The bootstrap method of the counters' dynamic constant (class files 55+).
pub const COUNTERS_BOOTSTRAP: (&str, &str) = (
    "counters",
    "(Ljava/lang/invoke/MethodHandles$Lookup;Ljava/lang/String;Ljava/lang/Class;)[J",
);
/// The int whose low bits pick a thread's copy of the coverage counters.
pub const THREAD_METHOD: (&str, &str) = ("thread", "()I");
/// The bootstrap method of the call site that gives a call its copy's
/// first counter (`s<mask>_<stride>`, `()I`; class files 55+, first load):
/// 0 while one application thread runs, then from the thread's id.
pub const STRIPE_BOOTSTRAP: (&str, &str) = (
    "stripe",
    "(Ljava/lang/invoke/MethodHandles$Lookup;Ljava/lang/String;Ljava/lang/invoke/MethodType;)Ljava/lang/invoke/CallSite;",
);
/// What the agent calls when a second application thread starts: every
/// call site of [`STRIPE_BOOTSTRAP`] picks copies by thread from then on.
pub const MANY_THREADS_METHOD: (&str, &str) = ("manyThreads", "()Ljava/lang/Object;");
/// The native behind it when the array is not published yet.
pub const COUNTERS_SLOW: &str = "covSlow";
/// What instrumented code calls with each new object of a class the
/// application names, and its site id (the Java probe: a stamp, or as
/// `ALLOC_WEAK_METHOD`).
pub const ALLOC_METHOD: (&str, &str) = ("alloc", "(Ljava/lang/Object;I)V");
/// The same for an array or an object of a JDK class (never stamped): the
/// agent's weak references or tags.
pub const ALLOC_WEAK_METHOD: (&str, &str) = ("allocWeak", "(Ljava/lang/Object;I)V");
/// After a JDK call that always returns a new object (reflection): the object
/// and the id of the calling place.
pub const ALLOC_ANY_METHOD: (&str, &str) = ("allocAny", "(Ljava/lang/Object;I)V");
/// The native behind it: the object, its place id and its type id.
pub const ALLOC_AT_METHOD: (&str, &str) = ("allocAt", "(Ljava/lang/Object;II)V");
/// After `receiver.clone()`: the result, the receiver and the place id.
pub const CLONED_METHOD: (&str, &str) = ("cloned", "(Ljava/lang/Object;Ljava/lang/Object;I)V");
/// After `super.clone()`: the result, the class the call resolved from and
/// the place id.
pub const CLONED_FROM_METHOD: (&str, &str) =
    ("clonedFrom", "(Ljava/lang/Object;Ljava/lang/Class;I)V");
/// `trace`: at entry and before returns, with the method id.
pub const TRACE_ENTER_METHOD: (&str, &str) = ("traceEnter", "(I)V");
pub const TRACE_EXIT_METHOD: (&str, &str) = ("traceExit", "(I)V");
/// `trace`: in the catch-all handler, before an `athrow`, at a handler's
/// start: the exception (left on the stack by a `dup`) and the method id.
pub const TRACE_UNWIND_METHOD: (&str, &str) = ("traceUnwind", "(Ljava/lang/Throwable;I)V");
pub const TRACE_THROW_METHOD: (&str, &str) = ("traceThrow", "(Ljava/lang/Throwable;I)V");
pub const TRACE_CATCH_METHOD: (&str, &str) = ("traceCatch", "(Ljava/lang/Throwable;I)V");
/// `lock`: at entry of `LockSupport.park(Object)`/`parkNanos(Object, long)`
/// and before they return, with the blocker.
pub const PARK_ENTER_METHOD: (&str, &str) = ("parkEnter", "(Ljava/lang/Object;)V");
pub const PARK_EXIT_METHOD: (&str, &str) = ("parkExit", "(Ljava/lang/Object;)V");

/// The names of the JVM's garbage collectors (`GarbageCollectorMXBean`s),
/// from the runtime class (which must be defined).
pub fn collector_names(jni: &crate::vm::Jni) -> Result<Vec<String>, crate::error::AgentError> {
    let names = jni
        .call_static_object(CLASS, "collectors", "()Ljava/lang/String;")
        .and_then(|s| {
            let text = jni.string_utf(s);
            jni.delete_local_ref(s);
            text
        })
        .map_err(|e| {
            crate::error::AgentError::Unsupported(format!(
                "the garbage collector is unknown ({})",
                e.0
            ))
        })?;
    Ok(names
        .unwrap_or_default()
        .split(',')
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The classes read back with the bytecode crate: names, the members the
    /// agent binds or calls, and an unchanged write.
    #[test]
    fn runtime_classes_have_the_members_the_agent_uses() {
        let mut names = Vec::new();
        for (name, bytes) in CLASSES {
            let class = profrj_bytecode::parse_class(bytes).unwrap();
            let cp = &class.constant_pool;
            assert_eq!(cp.class_name(class.this_class).as_deref(), Some(*name));
            assert_eq!(profrj_bytecode::write_class(&class), *bytes);
            let members: Vec<String> = class
                .methods
                .iter()
                .chain(&class.fields)
                .map(|m| {
                    format!(
                        "{}{}",
                        cp.text(m.name_index).unwrap(),
                        cp.text(m.descriptor_index).unwrap()
                    )
                })
                .collect();
            names.push((*name, members));
        }
        let has = |class: &str, member: &str| {
            names
                .iter()
                .any(|(n, m)| *n == class && m.iter().any(|x| x == member))
        };
        for m in [
            "enter(I)V",
            "exit(I)V",
            "unwind(I)V",
            "covSlow(I)[J",
            "COV[[J",
        ] {
            assert!(has(CLASS, m), "{m}");
        }
        assert!(has(
            CLASS,
            &format!("{}{}", COUNTERS_METHOD.0, COUNTERS_METHOD.1)
        ));
        for (n, d) in [
            ALLOC_METHOD,
            ALLOC_WEAK_METHOD,
            ALLOC_ANY_METHOD,
            ALLOC_AT_METHOD,
            CLONED_METHOD,
            CLONED_FROM_METHOD,
            PARK_ENTER_METHOD,
            PARK_EXIT_METHOD,
            TRACE_ENTER_METHOD,
            TRACE_EXIT_METHOD,
            TRACE_UNWIND_METHOD,
            TRACE_THROW_METHOD,
            TRACE_CATCH_METHOD,
            ("traceLeave", "(III)V"),
            ("traceThrown", "(III)V"),
            ("traceCaught", "(III)V"),
        ] {
            assert!(has(CLASS, &format!("{n}{d}")), "{n}{d}");
        }
        assert!(has(CLASS, "typeId(Ljava/lang/Class;)I"));
        for m in [
            "stampCounter(I)I",
            "stampChunk(I)Ljava/nio/ByteBuffer;",
            "stampHolder(Ljava/lang/Class;)Ljava/lang/Class;",
            "stampCensus(Ljava/lang/Class;Ljava/lang/Class;)V",
            "stampSite(II)I",
            "stampCheck(Ljava/lang/Object;Ljava/lang/Object;II)Ljava/lang/String;",
        ] {
            assert!(has(CLASS, m), "{m}");
        }
        assert!(has(STAMPS, "controlLjava/nio/ByteBuffer;"));
        assert!(has(STAMP_CHECK, "run()Ljava/lang/String;"));
        assert!(has(CLASS, "parking(Ljava/lang/Object;)V"));
        assert!(has(CLASS, "parked(Ljava/lang/Object;)V"));
    }
}
