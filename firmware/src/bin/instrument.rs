//! The firmware example image: plays the instrument of `src/instrument.rs` on bare
//! metal (QEMU `mps2-an386` Cortex-M4F, QEMU RISC-V `virt` RV32), prints the report line and
//! the painted stack peak of every codec call over semihosting, and exits through semihosting:
//! code 0 when every check passed, 1 on a failed check or on any CPU exception.
//!
//! No runtime crate: the vector table / reset handler (Cortex-M) and `_start` (RISC-V) below,
//! the linker scripts in `ld/`, and semihosting by hand (`bkpt 0xab`; the RISC-V
//! `slli`/`ebreak`/`srai` sequence).
#![no_std]
#![no_main]

// Shared with the host test, which uses parts the image does not (`NoMeter`).
#[allow(dead_code)]
#[path = "../instrument.rs"]
mod instrument;

use instrument::{Buffers, Line, Meter, Stage};

/// Any reachable panic would reference this undefined symbol, and the image would not link.
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    unsafe extern "C" {
        fn fzpack_panic_reached() -> !;
    }
    // SAFETY: never defined: a reachable panic makes the link fail, which is the check.
    unsafe { fzpack_panic_reached() }
}

#[cfg(target_arch = "arm")]
core::arch::global_asm!(
    r#"
    .section .vector_table, "a", %progbits
    .p2align 2
    .globl fw_vectors
fw_vectors:
    .word _stack_top
    .word fw_reset
    .word fw_fault      @ NMI
    .word fw_fault      @ HardFault
    .word fw_fault      @ MemManage
    .word fw_fault      @ BusFault
    .word fw_fault      @ UsageFault
    .word 0, 0, 0, 0
    .word fw_fault      @ SVCall
    .word fw_fault      @ DebugMonitor
    .word 0
    .word fw_fault      @ PendSV
    .word fw_fault      @ SysTick

    .section .text.fw_reset, "ax", %progbits
    .thumb
    .p2align 2
    .globl fw_reset
    .type fw_reset, %function
    .thumb_func
fw_reset:
    @ Enable CP10/CP11 (the FPU) before any Rust code runs. On a core without an FPU the
    @ write is ignored and the first FP instruction faults (the negative control).
    ldr r0, =0xE000ED88
    ldr r1, [r0]
    orr r1, r1, #0x00F00000
    str r1, [r0]
    dsb
    isb
    @ .data from its load address, .bss to zero.
    ldr r0, =__sdata
    ldr r1, =__edata
    ldr r2, =__sidata
1:  cmp r0, r1
    bhs 2f
    ldr r3, [r2], #4
    str r3, [r0], #4
    b 1b
2:  ldr r0, =__sbss
    ldr r1, =__ebss
    movs r2, #0
3:  cmp r0, r1
    bhs 4f
    str r2, [r0], #4
    b 3b
4:  bl fw_main
5:  b 5b
    .ltorg

    .section .text.fw_fault, "ax", %progbits
    .p2align 2
    .globl fw_fault
    .type fw_fault, %function
    .thumb_func
fw_fault:
    @ Any exception: say so and exit with a failure (no FP, no stack).
    movs r0, #0x04
    ldr r1, =fw_fault_msg
    bkpt 0xab
    movs r0, #0x18
    ldr r1, =0x20023
    bkpt 0xab
6:  b 6b
    .ltorg

    .section .text.fw_semihost, "ax", %progbits
    .p2align 2
    .globl fw_semihost
    .type fw_semihost, %function
    .thumb_func
fw_semihost:
    bkpt 0xab
    bx lr

    .section .rodata.fw_fault_msg, "a", %progbits
fw_fault_msg:
    .asciz "instrument: FAULT (CPU exception)\n"
"#
);

#[cfg(target_arch = "riscv32")]
core::arch::global_asm!(
    r#"
    .section .text.start, "ax", @progbits
    .globl _start
_start:
    la sp, _stack_top
    la t0, fw_trap
    csrw mtvec, t0
    # Turn the FPU on (mstatus.FS = Initial) for the images built with F; on a core without
    # F the field is read-only zero and the write does nothing.
    li t0, 0x2000
    csrs mstatus, t0
    la t0, __sbss
    la t1, __ebss
1:  bgeu t0, t1, 2f
    sw zero, 0(t0)
    addi t0, t0, 4
    j 1b
2:  call fw_main
3:  j 3b

    .p2align 2
fw_trap:
    # Any trap: say so and exit with a failure.
    li a0, 0x04
    la a1, fw_fault_msg
    call fw_semihost
    li a0, 0x18
    li a1, 0x20023
    call fw_semihost
4:  j 4b

    .section .text.fw_semihost, "ax", @progbits
    .p2align 4
    .globl fw_semihost
fw_semihost:
    .option push
    .option norvc
    slli zero, zero, 0x1f
    ebreak
    srai zero, zero, 0x7
    .option pop
    ret

    .section .rodata.fw_fault_msg, "a", @progbits
fw_fault_msg:
    .asciz "instrument: FAULT (CPU trap)\n"
"#
);

unsafe extern "C" {
    /// One semihosting call: operation `op`, parameter `arg` (r0/r1, a0/a1); returns r0/a0.
    fn fw_semihost(op: usize, arg: usize) -> usize;
    static _stack_bottom: u8;
}

const SYS_WRITE0: usize = 0x04;
const SYS_EXIT: usize = 0x18;
const ADP_STOPPED_APPLICATION_EXIT: usize = 0x2_0026;
const ADP_STOPPED_RUN_TIME_ERROR: usize = 0x2_0023;

/// Prints `text` and a newline on the host's console.
fn print(text: &[u8]) {
    // A report line (`Line`, 384 bytes at most), its newline and the terminating NUL.
    let mut buf = [0u8; 388];
    let mut n = 0;
    for (d, s) in buf.iter_mut().take(386).zip(text) {
        *d = *s;
        n += 1;
    }
    if let Some(nl) = buf.get_mut(n) {
        *nl = b'\n';
    }
    // The byte after the newline is still 0: the string is NUL-terminated.
    // SAFETY: SYS_WRITE0 reads the NUL-terminated string at the address, which `buf` holds.
    unsafe {
        fw_semihost(SYS_WRITE0, buf.as_ptr() as usize);
    }
}

/// Ends the run: exit code 0 (`ok`) or 1 under QEMU.
fn exit(ok: bool) -> ! {
    let reason = if ok {
        ADP_STOPPED_APPLICATION_EXIT
    } else {
        ADP_STOPPED_RUN_TIME_ERROR
    };
    // SAFETY: SYS_EXIT takes the reason code by value; it does not return under QEMU.
    unsafe {
        fw_semihost(SYS_EXIT, reason);
    }
    loop {
        core::hint::spin_loop();
    }
}

/// The current stack pointer.
#[inline(always)]
fn stack_pointer() -> usize {
    let sp: usize;
    // SAFETY: reads the stack pointer into a register; no memory access.
    unsafe {
        #[cfg(target_arch = "arm")]
        core::arch::asm!("mov {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags));
        #[cfg(target_arch = "riscv32")]
        core::arch::asm!("mv {}, sp", out(reg) sp, options(nomem, nostack, preserves_flags));
    }
    sp
}

/// Bytes painted below the stack pointer before each measured call.
const PAINT: usize = 8192;
const PATTERN: u32 = 0xA5C3_5A3C;

/// Calls `f` one frame below the caller, so that everything `f` puts on the stack lies below
/// the stack pointer the caller painted from.
#[inline(never)]
fn call<R, F: FnOnce() -> R>(f: F) -> R {
    f()
}

/// The last stage marker called (written so that the markers are distinct functions).
static MARK: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);

macro_rules! markers {
    ($($name:ident = $v:literal),* $(,)?) => {$(
        /// A stage marker: scripts/qemu-firmware.sh counts the instructions QEMU executes
        /// between a `fw_mark_<stage>` call and the next `fw_mark_end` call.
        #[unsafe(no_mangle)]
        #[inline(never)]
        pub extern "C" fn $name() {
            MARK.store($v, core::sync::atomic::Ordering::Relaxed);
        }
    )*};
}
markers!(
    fw_mark_pernix_compress = 1,
    fw_mark_pernix_decompress = 2,
    fw_mark_szp_stream_encode = 3,
    fw_mark_szp_encode = 4,
    fw_mark_szp_decode = 5,
    fw_mark_szp_decode_f32_step = 7,
    fw_mark_end = 6,
);

/// Calls the marker of `stage`.
#[inline(always)]
fn mark_begin(stage: Stage) {
    match stage {
        Stage::PernixCompress => fw_mark_pernix_compress(),
        Stage::PernixDecompress => fw_mark_pernix_decompress(),
        Stage::SzpStream => fw_mark_szp_stream_encode(),
        Stage::SzpEncode => fw_mark_szp_encode(),
        Stage::SzpDecode => fw_mark_szp_decode(),
        Stage::SzpDecodeStep => fw_mark_szp_decode_f32_step(),
    }
}

/// Stack painting: before each codec call the `PAINT` bytes below the stack pointer are filled
/// with a pattern; afterwards the deepest overwritten word gives the call's peak use (its own
/// frames plus those of [`call`], a few bytes).
struct StackMeter {
    peak: [usize; Stage::ALL.len()],
    overflow: bool,
}

impl Meter for StackMeter {
    fn stage<R>(&mut self, stage: Stage, f: impl FnOnce() -> R) -> R {
        let sp = stack_pointer() & !3;
        let floor = core::ptr::addr_of!(_stack_bottom) as usize;
        let bottom = sp.saturating_sub(PAINT).max(floor.next_multiple_of(4));
        let mut a = bottom;
        while a < sp {
            // SAFETY: [bottom, sp) is the free part of the stack region the linker script reserves (below the live frames; no interrupts are enabled), word aligned.
            unsafe { core::ptr::write_volatile(a as *mut u32, PATTERN) };
            a += 4;
        }
        mark_begin(stage);
        let r = call(f);
        fw_mark_end();
        let mut a = bottom;
        while a < sp {
            // SAFETY: as above; the callee has returned, so the words are free again.
            if unsafe { core::ptr::read_volatile(a as *const u32) } != PATTERN {
                break;
            }
            a += 4;
        }
        if a == bottom {
            self.overflow = true;
        }
        if let Some(p) = self.peak.get_mut(stage.index()) {
            *p = (*p).max(sp - a);
        }
        r
    }
}

static mut BUFFERS: Buffers = Buffers::new();

/// Entered from the reset handler / `_start` with the FPU enabled and `.bss` zeroed.
#[unsafe(no_mangle)]
pub extern "C" fn fw_main() -> ! {
    // SAFETY: the only reference to BUFFERS, taken once on the only thread.
    let bufs = unsafe { &mut *core::ptr::addr_of_mut!(BUFFERS) };
    let mut meter = StackMeter {
        peak: [0; Stage::ALL.len()],
        overflow: false,
    };
    // The target Cargo built for (build.rs passes it on).
    print(concat!("instrument: target ", env!("FW_TARGET")).as_bytes());
    match instrument::run(&mut meter, bufs) {
        Ok(summary) => {
            let mut line = Line::new();
            instrument::report(&summary, &mut line);
            print(line.as_bytes());
            for s in Stage::ALL {
                let mut l = Line::new();
                l.str("stack ")
                    .str(s.name())
                    .str(": ")
                    .dec(meter.peak.get(s.index()).copied().unwrap_or(0) as u64)
                    .str(" B (painted peak)");
                print(l.as_bytes());
            }
            // Every measured call ended with its end marker (this read also keeps the
            // markers' stores, and with them the marker calls, in the image).
            if MARK.load(core::sync::atomic::Ordering::Relaxed) != 6 {
                print(b"instrument: FAIL stage markers out of order");
                exit(false);
            }
            if meter.overflow {
                print(b"instrument: FAIL stack use reached the painted depth");
                exit(false);
            }
            print(b"instrument: ok");
            exit(true)
        }
        Err(f) => {
            let mut l = Line::new();
            l.str("instrument: FAIL ").str(f.name());
            print(l.as_bytes());
            exit(false)
        }
    }
}
