//! The firmware image's instrument (`firmware/src/instrument.rs`, the same source file) played on
//! the host: same signal, same codec calls (here on this CPU's fastest PERNIX and SZp paths),
//! and the report line with the archive hashes. `scripts/qemu-firmware.sh` runs this test,
//! runs the Cortex-M4F and RV32 images under QEMU, and fails unless all three lines are equal.
//! The line is also frozen below: it is what both images printed under QEMU when it was
//! recorded, so a change of the archive bytes on any path fails here first.

// The image uses parts of the module the host does not (stage names, meters).
#[allow(dead_code)]
#[path = "../../firmware/src/instrument.rs"]
mod instrument;

use instrument::{Buffers, Line, NoMeter, Summary};

/// Printed by `instrument` on QEMU mps2-an386 (Cortex-M4F) and virt (RV32IMAC).
const RECORDED: &str = "instrument: n=4096 szp_len=6040 szp_fnv=d4ab45a9c85be2f4 \
    szp_dec_fnv=f389c17f1001bede pernix_len=6272 pernix_fnv=0ccba8c4fc306095 \
    pernix_dec_fnv=190a5795d909cb82 szp_max_err_2^-40=1098907648 \
    pernix_max_err_2^-40=2148270080 step_len=6040 step_fnv=3e22c65ba65cfbf2 \
    step_dec_fnv=b823e3e81fcd4cc1 ties_fnv=83558b9fd49881e9 ties_dec_fnv=b9b3730d476207ea";

fn play() -> (Summary, String) {
    let mut bufs = Box::new(Buffers::new());
    let summary = match instrument::run(&mut NoMeter, &mut bufs) {
        Ok(s) => s,
        Err(f) => panic!("instrument failed on the host: {}", f.name()),
    };
    let mut line = Line::new();
    instrument::report(&summary, &mut line);
    let text = String::from_utf8(line.as_bytes().to_vec()).expect("ASCII report");
    (summary, text)
}

#[test]
fn host_report_equals_the_recorded_firmware_report() {
    let (summary, text) = play();
    // The line the QEMU script compares against (it greps for this prefix).
    println!("{text}");
    assert_eq!(text, RECORDED);
    // The bounds the instrument checked, from the summary: SZp within 1e-3, PERNIX within
    // half a step of 8/2047 (and both lossy, so the errors are not zero).
    let unit = 2f64.powi(-40);
    let szp = summary.szp_max_err as f64 * unit;
    let pernix = summary.pernix_max_err as f64 * unit;
    assert!(
        szp > 0.0 && szp <= instrument::SZP_EB,
        "szp max error {szp}"
    );
    let half_step = 0.5 * 8.0 / 2047.0;
    assert!(
        pernix > 0.0 && pernix <= half_step * 1.001,
        "pernix {pernix}"
    );
    assert!(summary.szp_len < instrument::N * 4 / 2, "SZp at least 2x");
}

#[test]
fn the_signal_is_exact_and_within_full_scale() {
    let mut s = vec![0f32; instrument::N];
    instrument::signal(&mut s);
    let mut distinct = std::collections::BTreeSet::new();
    for &x in &s {
        assert!(x.abs() <= instrument::FULL_SCALE);
        // An integer times 2^-12: exact in f32 on every IEEE target.
        let k = x * 4096.0;
        assert_eq!(k, k.trunc(), "{x}");
        distinct.insert(x.to_bits());
    }
    assert!(distinct.len() > 1000, "a varied signal: {}", distinct.len());
}

#[test]
fn a_changed_archive_changes_the_hash() {
    // The hash is a real witness of the bytes: one flipped bit of the archive changes it.
    let mut bufs = Box::new(Buffers::new());
    let s = match instrument::run(&mut NoMeter, &mut bufs) {
        Ok(s) => s,
        Err(f) => panic!("{}", f.name()),
    };
    let mut archive = bufs.szp[..s.szp_len].to_vec();
    let mut h = instrument::Fnv::new();
    h.bytes(&archive);
    assert_eq!(h.0, s.szp_fnv);
    archive[100] ^= 1;
    let mut h = instrument::Fnv::new();
    h.bytes(&archive);
    assert_ne!(h.0, s.szp_fnv);
}
