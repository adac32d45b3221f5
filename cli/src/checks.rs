//! Properties of the CLI's readers on untrusted bytes, shared by the fuzz targets
//! (`fuzz/fuzz_targets/pnx_stream_decode.rs`, `cli_container.rs`) and the stable-toolchain
//! test `cli/tests/fuzz_checks.rs`. Each function must never panic, abort or allocate more
//! than the input justifies, whatever `data` is; it panics only when a property fails.

use fzpack::pernix::{self, StreamHeader, Verify};
use fzpack::{DType, Element};

use crate::container::{self, ArchiveKind};

/// Archives decoding to more values than this are checked but not decoded (fuzz throughput:
/// a legal all-zero-width archive of a few KiB can hold millions of values). 2^16 values still
/// span many checksum chunks and CLI batches (the batch path below cuts 3 units at a time).
pub const MAX_DECODE_VALUES: u64 = 1 << 16;

/// The `.pnx` stream reader: header parse, whole-stream check, inspection (scales, CRCs),
/// one-shot decode with and without checksums, and the CLI's batch decode by units — all agree.
pub fn pnx_stream(data: &[u8]) {
    let checked = StreamHeader::check(data, Verify::Checksums);
    let skip = StreamHeader::check(data, Verify::Skip);
    if checked.is_ok() {
        assert!(skip.is_ok(), "header passes with checksums but not without");
    }
    let inspected = pernix::inspect(data, Verify::Checksums).is_ok();
    let inspected_skip = pernix::inspect(data, Verify::Skip).is_ok();
    if inspected {
        assert!(
            checked.is_ok() && inspected_skip,
            "inspection disagrees with the check"
        );
    }
    let Ok(h) = skip else { return };
    if h.n > MAX_DECODE_VALUES {
        return;
    }
    let ok = (checked.is_ok(), inspected, inspected_skip);
    match h.dtype {
        DType::F32 => pnx_decode::<f32>(&h, data, ok),
        DType::F64 => pnx_decode::<f64>(&h, data, ok),
    }
}

fn pnx_decode<T: Element>(
    h: &StreamHeader,
    data: &[u8],
    (sums_ok, ins, ins_skip): (bool, bool, bool),
) {
    let d = pernix::Decoder::new();
    let all = d.to_vec::<T>(data);
    let raw = d.clone().verify(Verify::Skip).to_vec::<T>(data);
    // Inspection (what `fzpack info` runs) accepts exactly what the decoders accept.
    assert_eq!(
        all.is_ok(),
        ins,
        "inspection and the verified decode disagree"
    );
    assert_eq!(
        raw.is_ok(),
        ins_skip,
        "inspection and the unverified decode disagree"
    );
    if let Ok(v) = &all {
        assert!(
            sums_ok,
            "decoded with checksums but the header check failed"
        );
        assert_eq!(v.len() as u64, h.n);
        let r = raw
            .as_ref()
            .expect("verified stream fails unverified decode");
        assert!(same(v, r), "verified and unverified decodes differ");
    }
    // The CLI's batch path: units of a few chunks, each verified (in the call) before it is used.
    let Some(units) = h.units() else { return };
    let per = 3usize;
    let mut out: Vec<T> = Vec::new();
    let mut u0 = 0;
    let mut failed = false;
    while u0 < units {
        let u1 = (u0 + per).min(units);
        let (span, vals) = h.unit_span(u0..u1);
        let mut buf = vec![T::ZERO; vals.len()];
        let Some(body) = data.get(span) else {
            failed = true;
            break;
        };
        if d.units(h, body, u0, &mut buf).is_err() {
            failed = true;
            break;
        }
        out.extend_from_slice(&buf);
        u0 = u1;
    }
    match &all {
        Ok(v) => {
            assert!(!failed, "one-shot decode passes, batch decode fails");
            assert!(
                same(v, &out),
                "batch decode differs from the one-shot decode"
            );
        }
        Err(_) => assert!(
            failed || units == 0 || !sums_ok,
            "batch decode passes, one-shot fails"
        ),
    }
}

/// Bitwise equality (NaN-safe).
fn same<T: Element>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.to_f64().to_bits() == y.to_f64().to_bits())
}

/// The CLI's container detection and validation (`fzpack info` / `decompress`): `check`
/// (structural, no CRC pass) agrees with and without checksums and never rejects what
/// `describe` (which verifies) accepts; a checked archive's count is bounded by its bytes;
/// decoding agrees with the summary, and for `.pnx` `describe` accepts exactly what the
/// decoder accepts.
pub fn container(data: &[u8]) {
    let kind = container::detect(data);
    let c = container::check(data, Verify::Checksums);
    let s = container::check(data, Verify::Skip);
    if kind.is_none() {
        assert!(c.is_err() && s.is_err(), "unknown magic accepted");
    }
    if let Ok(sum) = &c {
        assert_eq!(Some(sum.kind), kind);
        assert_eq!(
            s.as_ref().ok(),
            Some(sum),
            "check differs without checksums"
        );
        // No format stores more than 4096 values per archive byte (SZp: a width byte per
        // block of at most 4096 values; PERNIX and .fzm need more).
        assert!(sum.n <= (data.len() as u64).saturating_mul(4096));
    }
    let dc = container::describe(data, Verify::Checksums).is_ok();
    let ds = container::describe(data, Verify::Skip).is_ok();
    if dc {
        assert!(c.is_ok(), "describe passes, check fails");
        assert!(ds, "describe passes with checksums, fails without");
    }
    if ds {
        assert!(s.is_ok(), "describe passes without checksums, check fails");
    }
    let Ok(sum) = s else { return };
    if sum.n > MAX_DECODE_VALUES {
        return;
    }
    match sum.dtype {
        DType::F32 => decode_agrees::<f32>(data, sum.kind, sum.n, (c.is_ok(), dc, ds)),
        DType::F64 => decode_agrees::<f64>(data, sum.kind, sum.n, (c.is_ok(), dc, ds)),
    }
}

fn decode_agrees<T: Element>(
    data: &[u8],
    kind: ArchiveKind,
    n: u64,
    (sums_ok, dc, ds): (bool, bool, bool),
) {
    let v = container::decode_all::<T>(data, Verify::Checksums);
    if let Ok(v) = &v {
        assert!(sums_ok, "{kind:?}: decoded although the checks failed");
        assert!(dc, "{kind:?}: decoded although describe fails");
        assert_eq!(v.len() as u64, n);
    }
    if kind == ArchiveKind::Pernix {
        let raw = container::decode_all::<T>(data, Verify::Skip);
        assert_eq!(v.is_ok(), dc, "info and the verified decode disagree");
        assert_eq!(raw.is_ok(), ds, "info and the unverified decode disagree");
    }
    // The other element type is refused.
    match T::TYPE {
        DType::F32 => assert!(container::decode_all::<f64>(data, Verify::Skip).is_err()),
        DType::F64 => assert!(container::decode_all::<f32>(data, Verify::Skip).is_err()),
    }
}
