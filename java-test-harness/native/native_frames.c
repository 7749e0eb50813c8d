/*
 * The JNI library of profrj.harness.NativeFrames (tests/native_frames.rs
 * compiles it with cc, with and without frame pointers): one hot C function,
 * profrj_spin, called through a second, the JNI entry
 * Java_profrj_harness_NativeFrames_spin. No header is needed: the JNI types
 * used are a pointer and a 64-bit integer.
 */
#include <stdint.h>

/* Pure CPU work (xorshift), never inlined nor cloned, so its frame is its
 * own and its symbol is its name. Its state lives in a volatile local: a
 * function with no stack use gets no frame from GCC 12 even under
 * -fno-omit-frame-pointer, and a frame-pointer walk from it would then
 * skip its caller. */
__attribute__((noinline, noclone, visibility("default")))
uint64_t profrj_spin(uint64_t n) {
    volatile uint64_t x = 0x9e3779b97f4a7c15ull;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t v = x;
        v ^= v << 13;
        v ^= v >> 7;
        v ^= v << 17;
        x = v;
    }
    return x;
}

/* static native long spin(long n): the result is used after the call, so
 * the call is no tail call and this frame stays under profrj_spin's. */
__attribute__((visibility("default")))
int64_t Java_profrj_harness_NativeFrames_spin(void *env, void *cls, int64_t n) {
    (void) env;
    (void) cls;
    uint64_t r = profrj_spin((uint64_t) n);
    __asm__ volatile("" ::: "memory");
    return (int64_t) (r ^ (uint64_t) n);
}
