//! The unwinder's rules on byte patterns of HotSpot's code generators and
//! stacks laid out by hand.

use super::frame::{MAX_SHIFT_WORDS, PUSH_RBP};
use super::*;
use std::collections::HashMap;

struct Fake {
    stack: HashMap<usize, usize>,
    code_at: usize,
    code: Vec<u8>,
}

impl Memory for Fake {
    fn word(&self, at: usize) -> Option<usize> {
        self.stack.get(&at).copied()
    }
    fn is_code(&self, pc: usize) -> bool {
        (CODE..CODE + 0x100_0000).contains(&pc)
    }
    fn byte(&self, at: usize) -> Option<u8> {
        self.code.get(at.checked_sub(self.code_at)?).copied()
    }
}

const SP: usize = 0x7000_0000_1000;
const CODE: usize = 0x7f00_0000_0000;
const RET_ADDR: usize = 0x7f00_0010_0042;
const CALLER_FP: usize = 0x7000_0000_2000;

fn blob(code: Code, len: usize) -> Blob {
    Blob {
        start: CODE,
        end: CODE + len,
        code,
    }
}

fn stub_blob(layout: StubLayout, len: usize) -> Blob {
    blob(Code::Stub { name: 0, layout }, len)
}

fn first(c: &Callers) -> Option<Regs> {
    c.iter().next()
}

/// The stack as a frame that pushed nothing, or rbp, or a frame of `n` bytes left it.
fn fake(code: &[u8], stack: &[(usize, usize)]) -> Fake {
    Fake {
        stack: stack.iter().copied().collect(),
        code_at: CODE,
        code: code.to_vec(),
    }
}

#[test]
fn a_vtable_stub_returns_from_the_top_of_the_stack() {
    let m = fake(&[0x48, 0x8b, 0x06, 0xc3], &[(SP, RET_ADDR)]);
    let top = Regs {
        pc: CODE + 1,
        sp: SP,
        fp: 1,
    };
    let b = stub_blob(StubLayout::Frameless, 4);
    assert_eq!(
        first(&callers(top, AdapterRegs::default(), Some(&b), &m)),
        Some(Regs {
            pc: RET_ADDR,
            sp: SP + 8,
            fp: 1
        })
    );
}

#[test]
fn a_stub_past_enter_unwinds_through_its_frame_pointer() {
    // push rbp; mov rbp, rsp; <body>...; leave; ret
    let code = [0x55, 0x48, 0x89, 0xe5, 0x90, 0x90, 0xc9, 0xc3];
    let fp = SP + 0x20;
    let m = fake(&code, &[(fp, CALLER_FP), (fp + 8, RET_ADDR), (SP, 0xffff)]);
    let b = stub_blob(StubLayout::Other, code.len());
    let in_body = Regs {
        pc: CODE + 4,
        sp: SP,
        fp,
    };
    assert_eq!(
        first(&callers(in_body, AdapterRegs::default(), Some(&b), &m)),
        Some(Regs {
            pc: RET_ADDR,
            sp: fp + 16,
            fp: CALLER_FP
        })
    );
    // fp == sp right after `enter`: still the frame pointer's frame.
    let at_enter_end = Regs {
        pc: CODE + 4,
        sp: fp,
        fp,
    };
    assert_eq!(
        first(&callers(at_enter_end, AdapterRegs::default(), Some(&b), &m)).map(|r| r.pc),
        Some(RET_ADDR)
    );
    // Between `push rbp` and `mov rbp, rsp`.
    let m2 = fake(&code, &[(SP, CALLER_FP), (SP + 8, RET_ADDR)]);
    let pushed = Regs {
        pc: CODE + 1,
        sp: SP,
        fp: CALLER_FP,
    };
    assert_eq!(
        first(&callers(pushed, AdapterRegs::default(), Some(&b), &m2)),
        Some(Regs {
            pc: RET_ADDR,
            sp: SP + 16,
            fp: CALLER_FP
        })
    );
    // At the final `ret`, after `leave`.
    let m3 = fake(&code, &[(SP, RET_ADDR)]);
    let at_ret = Regs {
        pc: CODE + 7,
        sp: SP,
        fp: CALLER_FP,
    };
    assert_eq!(
        first(&callers(at_ret, AdapterRegs::default(), Some(&b), &m3)).map(|r| r.sp),
        Some(SP + 8)
    );
}

/// A compiled method: [stack bang] push rbp; sub rsp, 0x30; body;
/// add rsp, 0x30; pop rbp; cmp rsp, [r15+0x448]; ja slow; ret.
fn compiled_code() -> Vec<u8> {
    let mut c = vec![0x89, 0x84, 0x24, 0x00, 0xc0, 0xfe, 0xff]; // 0: stack bang
    c.push(0x55); // 7: push rbp
    c.extend([0x48, 0x83, 0xec, 0x30]); // 8: sub rsp, 0x30
    c.extend([0x90, 0x90]); // 12: body
    c.extend([0x48, 0x83, 0xc4, 0x30]); // 14: add rsp, 0x30
    c.push(0x5d); // 18: pop rbp
    c.extend([0x49, 0x3b, 0xa7, 0x48, 0x04, 0x00, 0x00]); // 19: cmp rsp, [r15+0x448]
    c.extend([0x0f, 0x87, 0x01, 0x00, 0x00, 0x00]); // 26: ja
    c.push(0xc3); // 32: ret
    c
}

#[test]
fn a_compiled_methods_entry_and_exit_unwind_by_their_shape() {
    let code = compiled_code();
    let b = blob(
        Code::Compiled {
            method: 1,
            info: None,
        },
        code.len(),
    );
    let unbuilt = fake(&code, &[(SP, RET_ADDR)]);
    let pushed = fake(&code, &[(SP, CALLER_FP), (SP + 8, RET_ADDR)]);
    let built = fake(&code, &[(SP + 0x30, CALLER_FP), (SP + 0x38, RET_ADDR)]);
    let at = |off: usize, m: &Fake| {
        let top = Regs {
            pc: CODE + off,
            sp: SP,
            fp: 3,
        };
        first(&callers(top, AdapterRegs::default(), Some(&b), m))
    };
    let want = |sp: usize, fp: usize| {
        Some(Regs {
            pc: RET_ADDR,
            sp,
            fp,
        })
    };
    assert_eq!(at(0, &unbuilt), want(SP + 8, 3), "stack bang");
    assert_eq!(at(7, &unbuilt), want(SP + 8, 3), "push rbp");
    assert_eq!(at(8, &pushed), want(SP + 16, CALLER_FP), "after push rbp");
    assert_eq!(at(14, &built), want(SP + 0x40, CALLER_FP), "add rsp");
    assert_eq!(at(18, &pushed), want(SP + 16, CALLER_FP), "pop rbp");
    assert_eq!(at(19, &unbuilt), want(SP + 8, 3), "return poll");
    assert_eq!(at(26, &unbuilt), want(SP + 8, 3), "ja of the poll");
    assert_eq!(at(32, &unbuilt), want(SP + 8, 3), "ret");
}

#[test]
fn at_the_entry_barrier_the_frame_is_built() {
    // push rbp; sub rsp, 0x40; nop; cmp dword [r15+0x20], 0; jne slow
    let mut code = vec![0x55, 0x48, 0x81, 0xec, 0x40, 0, 0, 0, 0x90];
    code.extend([0x41, 0x81, 0x7f, 0x20, 0, 0, 0, 0]);
    code.extend([0x0f, 0x85, 0, 0, 0, 0]);
    let b = blob(
        Code::Compiled {
            method: 1,
            info: None,
        },
        code.len(),
    );
    let m = fake(&code, &[(SP + 0x40, CALLER_FP), (SP + 0x48, RET_ADDR)]);
    let want = Some(Regs {
        pc: RET_ADDR,
        sp: SP + 0x50,
        fp: CALLER_FP,
    });
    for pc in [9, 17] {
        let top = Regs {
            pc: CODE + pc,
            sp: SP,
            fp: 3,
        };
        assert_eq!(
            first(&callers(top, AdapterRegs::default(), Some(&b), &m)),
            want,
            "at {pc}"
        );
    }
}

#[test]
fn at_the_entry_barrier_after_c2s_store_of_rbp_the_frame_is_built() {
    // JDK 21's C2 without a stack bang: sub rsp, 0x18 (imm32); mov
    // [rsp+0x10], rbp; cmp dword [r15+0x20], 1; jne slow (the bytes of a
    // megamorphic call's target, from PROFRJ_WALK_DEBUG).
    let mut code = vec![0x48, 0x81, 0xec, 0x18, 0, 0, 0];
    code.extend([0x48, 0x89, 0x6c, 0x24, 0x10]);
    code.extend([0x41, 0x81, 0x7f, 0x20, 1, 0, 0, 0]);
    code.extend([0x0f, 0x85, 0x2d, 0, 0, 0]);
    // The same with imm8 and disp32 encodings.
    let mut wide = vec![0x48, 0x83, 0xec, 0x18];
    wide.extend([0x48, 0x89, 0xac, 0x24, 0x10, 0, 0, 0]);
    wide.extend([0x41, 0x81, 0x7f, 0x20, 1, 0, 0, 0]);
    let m = |code: &[u8]| fake(code, &[(SP + 0x10, CALLER_FP), (SP + 0x18, RET_ADDR)]);
    let want = Some(Regs {
        pc: RET_ADDR,
        sp: SP + 0x20,
        fp: CALLER_FP,
    });
    for (code, pc) in [(&code, 12), (&code, 20), (&wide, 12)] {
        let b = blob(
            Code::Compiled {
                method: 1,
                info: None,
            },
            code.len(),
        );
        let top = Regs {
            pc: CODE + pc,
            sp: SP,
            fp: 3,
        };
        assert_eq!(
            first(&callers(top, AdapterRegs::default(), Some(&b), &m(code))),
            want,
            "at {pc}"
        );
    }
    // A store that is not the frame's top word is no prologue's.
    let mut odd = vec![0x48, 0x83, 0xec, 0x18];
    odd.extend([0x48, 0x89, 0x6c, 0x24, 0x08]);
    odd.extend([0x41, 0x81, 0x7f, 0x20, 1, 0, 0, 0]);
    let b = blob(
        Code::Compiled {
            method: 1,
            info: None,
        },
        odd.len(),
    );
    let top = Regs {
        pc: CODE + 9,
        sp: SP,
        fp: 3,
    };
    assert_eq!(
        first(&callers(top, AdapterRegs::default(), Some(&b), &m(&odd))),
        None
    );
}

#[test]
fn in_a_compiled_body_the_frame_is_tried_with_sp_moved_up_first() {
    let code = [0x90; 64];
    let b = blob(
        Code::Compiled {
            method: 1,
            info: None,
        },
        code.len(),
    );
    let stack: Vec<(usize, usize)> = (0..40).map(|k| (SP + 8 * k, 0)).collect();
    let m = fake(&code, &stack);
    let top = Regs {
        pc: CODE + 30,
        sp: SP,
        fp: 0,
    };
    let all: Vec<Retry> = callers(top, AdapterRegs::default(), Some(&b), &m)
        .retries()
        .collect();
    assert_eq!(all[0], Retry::Unshifted(Regs { sp: SP + 8, ..top }));
    assert_eq!(
        all[MAX_SHIFT_WORDS - 1],
        Retry::Unshifted(Regs {
            sp: SP + 8 * MAX_SHIFT_WORDS,
            ..top
        })
    );
    assert!(matches!(all[MAX_SHIFT_WORDS], Retry::Caller(_)));
}

#[test]
fn a_runtime_stub_in_the_vm_returns_by_its_frame() {
    // C2's: sub rsp, 8; mov [rsp], rbp; … call
    let c2 = [0x48, 0x81, 0xec, 0x08, 0, 0, 0, 0x48, 0x89, 0x2c, 0x24];
    let m = fake(&c2, &[(SP, CALLER_FP), (SP + 8, RET_ADDR)]);
    let anchor = Regs {
        pc: CODE + 9,
        sp: SP,
        fp: 0,
    };
    let b = stub_blob(StubLayout::Other, 64);
    let want = Some(Regs {
        pc: RET_ADDR,
        sp: SP + 16,
        fp: CALLER_FP,
    });
    assert_eq!(stub_caller(anchor, &b, &m), want);
    // C1's: enter; … (rbp the frame pointer). HotSpot's bytes (JDK 21's
    // counter_overflow stub: push rbp; mov rbp, rsp; sub rsp, 0x80), and
    // a C compiler's encoding of the same `mov`.
    let fp = SP + 0x30;
    let anchor = Regs {
        pc: CODE + 4,
        sp: SP,
        fp,
    };
    for c1 in [
        &[0x55, 0x48, 0x8b, 0xec, 0x48, 0x81, 0xec, 0x80, 0, 0, 0][..],
        &[0x55, 0x48, 0x89, 0xe5, 0x90][..],
    ] {
        let m = fake(c1, &[(fp, CALLER_FP), (fp + 8, RET_ADDR)]);
        assert_eq!(
            stub_caller(anchor, &b, &m),
            Some(Regs {
                pc: RET_ADDR,
                sp: fp + 16,
                fp: CALLER_FP
            })
        );
    }
    // Anything else: no guess.
    let m = fake(&[0x90; 8], &[]);
    assert_eq!(stub_caller(anchor, &b, &m), None);
}

#[test]
fn adapters_and_the_interpreter_entry_return_through_rax_and_r13() {
    // An adapter moving arguments, and JDK 17's zerolocals entry after
    // `pop rax` pushing zeroed locals (rbp still the caller's).
    let m = fake(&[0x90; 16], &[(SP, 7)]);
    let top = Regs {
        pc: CODE + 4,
        sp: SP,
        fp: CALLER_FP,
    };
    let regs = AdapterRegs {
        rax: RET_ADDR,
        r13: SP + 0x40,
        rbx: 0,
    };
    let in_registers = Regs {
        pc: RET_ADDR,
        sp: SP + 0x40,
        fp: CALLER_FP,
    };
    let all = |layout, regs| -> Vec<Regs> {
        callers(top, regs, Some(&stub_blob(layout, 16)), &m)
            .iter()
            .collect()
    };
    let on_top = Regs {
        pc: 7,
        sp: SP + 8,
        fp: CALLER_FP,
    };
    assert_eq!(all(StubLayout::Adapter, regs), [on_top, in_registers]);
    assert_eq!(
        all(StubLayout::Interpreter, regs).last(),
        Some(&in_registers)
    );
    // Unknown registers (a frame stepped through, not interrupted): no guess from them.
    assert!(all(StubLayout::Interpreter, AdapterRegs::default())
        .iter()
        .all(|r| r.pc != RET_ADDR));
}

#[test]
fn an_interpreter_frame_being_built_returns_to_its_callers_saved_sp() {
    // push rax; push rbp; mov rbp, rsp; push r13; push 0; push rbx; …
    // (JDK 17, loading the mirror): the caller's sp below fp.
    let b = stub_blob(StubLayout::Interpreter, 16);
    let fp = SP + 0x18;
    let sender_sp = fp + 0x40;
    let m = fake(
        &[0x90; 16],
        &[(fp - 8, sender_sp), (fp, CALLER_FP), (fp + 8, RET_ADDR)],
    );
    let top = Regs {
        pc: CODE + 4,
        sp: SP,
        fp,
    };
    let all: Vec<Regs> = callers(top, AdapterRegs::default(), Some(&b), &m)
        .iter()
        .collect();
    let caller = Regs {
        pc: RET_ADDR,
        sp: sender_sp,
        fp: CALLER_FP,
    };
    assert_eq!(all.first(), Some(&caller));
    // Then the plain frame-pointer frame.
    assert_eq!(
        all.get(1),
        Some(&Regs {
            sp: fp + 16,
            ..caller
        })
    );
    // A word below fp that cannot be the caller's sp: no such guess.
    let m = fake(
        &[0x90; 16],
        &[(fp - 8, SP), (fp, CALLER_FP), (fp + 8, RET_ADDR)],
    );
    let all: Vec<Regs> = callers(top, AdapterRegs::default(), Some(&b), &m)
        .iter()
        .collect();
    assert_eq!(
        all.first(),
        Some(&Regs {
            sp: fp + 16,
            ..caller
        })
    );
}

#[test]
fn native_code_is_left_through_its_frame_pointers_to_generated_code() {
    // Three C++ frames (rbp chain) over a compiled method's call.
    let (f1, f2, f3) = (SP + 0x20, SP + 0x80, SP + 0x100);
    let native = 0x5555_0000_1234;
    let m = fake(
        &[],
        &[
            (SP, 1),
            (f1, f2),
            (f1 + 8, native),
            (f2, f3),
            (f2 + 8, native + 8),
            (f3, CALLER_FP),
            (f3 + 8, RET_ADDR),
        ],
    );
    let top = Regs {
        pc: native + 16,
        sp: SP,
        fp: f1,
    };
    let all: Vec<Regs> = callers(top, AdapterRegs::default(), None, &m)
        .iter()
        .collect();
    assert_eq!(
        all.last(),
        Some(&Regs {
            pc: RET_ADDR,
            sp: f3 + 16,
            fp: CALLER_FP
        })
    );
    // A chain that turns down the stack, or never reaches generated code: none.
    let m = fake(&[], &[(f1, SP), (f1 + 8, native)]);
    let all: Vec<Regs> = callers(top, AdapterRegs::default(), None, &m)
        .iter()
        .collect();
    assert!(all.iter().all(|r| r.pc != RET_ADDR && r.sp != SP + 16));
}

/// The interpreter's return in `code` caught at `pc` with sp at `sp`: the
/// caller the unwinder finds first (return address on top of the stack,
/// then in r13; the caller's sp in rbx, [`SENDER_SP`]).
fn caller_while_returning(code: &[u8], pc: usize, sp: usize) -> Option<Regs> {
    let b = stub_blob(StubLayout::Interpreter, code.len());
    let regs = AdapterRegs {
        rax: 0,
        r13: RET_ADDR,
        rbx: SENDER_SP,
    };
    let m = fake(code, &[(SP, RET_ADDR)]);
    let top = Regs {
        pc: CODE + pc,
        sp,
        fp: CALLER_FP,
    };
    first(&callers(top, regs, Some(&b), &m))
}

/// The caller's own sp, as the interpreter keeps it in rbx.
const SENDER_SP: usize = SP + 0x80;

/// The caller every return's instruction must lead to.
const RETURNED: Option<Regs> = Some(Regs {
    pc: RET_ADDR,
    sp: SENDER_SP,
    fp: CALLER_FP,
});

#[test]
fn the_interpreter_returning_has_its_caller_in_r13_and_rbx() {
    // JDK 21: leave; pop r13; mov rsp, rbx; cmp rsp, [r15+0x538]; jb +11;
    // movq [r15+0x538], 0; jmp r13
    let code = [
        0xc9, 0x41, 0x5d, 0x48, 0x8b, 0xe3, 0x49, 0x3b, 0xa7, 0x38, 0x05, 0, 0, 0x72, 0x0b, 0x49,
        0xc7, 0x87, 0x38, 0x05, 0, 0, 0, 0, 0, 0, 0x41, 0xff, 0xe5,
    ];
    // At `pop r13`, at `mov rsp, rbx`, at the watermark check, at the jump.
    assert_eq!(caller_while_returning(&code, 1, SP), RETURNED);
    assert_eq!(caller_while_returning(&code, 3, SP + 8), RETURNED);
    assert_eq!(caller_while_returning(&code, 6, SENDER_SP), RETURNED);
    assert_eq!(caller_while_returning(&code, 26, SENDER_SP), RETURNED);
}

#[test]
fn jdk_25s_interpreter_return_clears_a_byte_between_leave_and_pop() {
    // JDK 25: leave; movb [r15+0x3be], 0; pop r13; mov rsp, rbx;
    // cmp rsp, [r15+0x620]; jb +11; movq [r15+0x620], 0; jmp r13
    let mut code = vec![0xc9, 0x41, 0xc6, 0x87, 0xbe, 0x03, 0, 0, 0];
    code.extend([0x41, 0x5d, 0x48, 0x8b, 0xe3]);
    code.extend([0x49, 0x3b, 0xa7, 0x20, 0x06, 0, 0, 0x72, 0x0b]);
    code.extend([0x49, 0xc7, 0x87, 0x20, 0x06, 0, 0, 0, 0, 0, 0]);
    code.extend([0x41, 0xff, 0xe5]);
    // At the byte's clearing, at `pop r13`, at `mov rsp, rbx`, at the
    // watermark check, at its branch, at the jump.
    assert_eq!(caller_while_returning(&code, 1, SP), RETURNED);
    assert_eq!(caller_while_returning(&code, 9, SP), RETURNED);
    assert_eq!(caller_while_returning(&code, 11, SP + 8), RETURNED);
    assert_eq!(caller_while_returning(&code, 14, SENDER_SP), RETURNED);
    assert_eq!(caller_while_returning(&code, 21, SENDER_SP), RETURNED);
    assert_eq!(caller_while_returning(&code, 34, SENDER_SP), RETURNED);
}

#[test]
fn unknown_code_tries_the_top_of_the_stack_then_the_frame_pointer() {
    let fp = SP + 0x40;
    let m = fake(&[], &[(SP, 5), (fp, CALLER_FP), (fp + 8, RET_ADDR)]);
    let top = Regs { pc: 9, sp: SP, fp };
    let all: Vec<Regs> = callers(top, AdapterRegs::default(), None, &m)
        .iter()
        .collect();
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].pc, 5);
    assert_eq!(all[1].pc, RET_ADDR);
    // A frame pointer below sp is no frame pointer.
    let bad = Regs {
        pc: 9,
        sp: SP,
        fp: SP - 8,
    };
    assert_eq!(
        callers(bad, AdapterRegs::default(), None, &m)
            .iter()
            .count(),
        1
    );
}

#[test]
fn an_intrinsic_that_saved_sp_on_the_stack_gives_the_frame_its_sp() {
    // C2's string_indexof, searching: its operands and then the frame's
    // own sp pushed (4 words), the frame 16-byte aligned above.
    let code = [0x90; 64];
    let b = blob(
        Code::Compiled {
            method: 1,
            info: None,
        },
        code.len(),
    );
    let frame_sp = SP + 32;
    let stack: Vec<(usize, usize)> = (0..40)
        .map(|k| (SP + 8 * k, if k == 0 { frame_sp } else { 0 }))
        .collect();
    let m = fake(&code, &stack);
    let top = Regs {
        pc: CODE + 30,
        sp: SP,
        fp: 7,
    };
    assert_eq!(
        saved_sp(top, &b, &m),
        Some(Regs {
            sp: frame_sp,
            ..top
        })
    );
    // The same words, but not a compiled method's body: a stub, the
    // prologue's `push rbp` done (the word on top is the caller's rbp).
    assert_eq!(
        saved_sp(top, &stub_blob(StubLayout::Other, code.len()), &m),
        None
    );
    let mut prologue = code;
    prologue[29] = PUSH_RBP;
    assert_eq!(saved_sp(top, &b, &fake(&prologue, &stack)), None);
}

#[test]
fn a_stack_word_that_cannot_be_a_saved_sp_is_not_taken_for_one() {
    let code = [0x90; 64];
    let b = blob(
        Code::Compiled {
            method: 1,
            info: None,
        },
        code.len(),
    );
    let top = Regs {
        pc: CODE + 30,
        sp: SP,
        fp: 0,
    };
    let on_top = |word: usize| {
        let stack: Vec<(usize, usize)> = (0..40)
            .map(|k| (SP + 8 * k, if k == 0 { word } else { 0 }))
            .collect();
        saved_sp(top, &b, &fake(&code, &stack))
    };
    assert!(on_top(SP + 16).is_some());
    // Not 16-byte aligned, below sp, sp itself, too far above, outside the
    // stack, a return address.
    for word in [
        SP + 8,
        SP + 24,
        SP - 16,
        SP,
        SP + 16 * MAX_SHIFT_WORDS,
        SP + 8 * 40,
        RET_ADDR,
    ] {
        assert_eq!(on_top(word), None, "{word:#x}");
    }
}
