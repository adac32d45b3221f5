//! Cortex-M4F: capture into static buffers, print the report over semihosting, exit.
//! Elsewhere (the host): the same capture, the same line on stdout (what CI compares).
#![cfg_attr(target_os = "none", no_std, no_main)]

use fzpack_cortex_m4f_example::{N, PERNIX_BLOCKS, Report, SZP_CAP, Sensor, capture};

/// The line both builds print.
macro_rules! report_line {
    ($out:ident, $r:expr) => {{
        let r: &Report = $r;
        $out!(
            "capture: n={} szp_len={} szp_fnv={:016x} pernix_fnv={:016x} szp_max_err_2^-40={}",
            N,
            r.szp_len,
            r.szp_fnv,
            r.pernix_fnv,
            r.szp_max_err
        )
    }};
}

#[cfg(target_os = "none")]
mod mcu {
    use super::*;
    use cortex_m_rt::entry;
    use cortex_m_semihosting::{debug, hprintln};
    use panic_halt as _;

    #[entry]
    fn main() -> ! {
        // Static buffers (taken once; `singleton!` hands out each `&'static mut` once).
        let szp = cortex_m::singleton!(: [u8; SZP_CAP] = [0; SZP_CAP]);
        let pernix = cortex_m::singleton!(: [u8; 64 * PERNIX_BLOCKS] = [0; 64 * PERNIX_BLOCKS]);
        let decoded = cortex_m::singleton!(: [f32; N] = [0.0; N]);
        let ok = match (szp, pernix, decoded) {
            (Some(szp), Some(pernix), Some(decoded)) => {
                match capture(&mut Sensor::new(), szp, pernix, decoded) {
                    Ok(r) => {
                        report_line!(hprintln, &r);
                        true
                    }
                    Err(e) => {
                        hprintln!("capture: FAIL {:?}", e);
                        false
                    }
                }
            }
            _ => false,
        };
        debug::exit(if ok {
            debug::EXIT_SUCCESS
        } else {
            debug::EXIT_FAILURE
        });
        loop {}
    }
}

#[cfg(not(target_os = "none"))]
fn main() {
    let mut szp = vec![0u8; SZP_CAP];
    let mut pernix = vec![0u8; 64 * PERNIX_BLOCKS];
    let mut decoded = vec![0f32; N];
    match capture(&mut Sensor::new(), &mut szp, &mut pernix, &mut decoded) {
        Ok(r) => report_line!(println, &r),
        Err(e) => {
            println!("capture: FAIL {e:?}");
            std::process::exit(1);
        }
    }
}
