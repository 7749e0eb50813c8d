//! Java class-file reader, model, writer and code rewriter. No JVM dependency.
