//! `--gpu`: SZp on an NVIDIA GPU through `fzpack::gpu` (the `cuda` feature of this package).
//!
//! Without the feature `--gpu` still parses and fails with a message saying how to rebuild;
//! with it, a missing driver, NVRTC or device is a usage-style error (exit 2). Nothing falls
//! back to the CPU: a user who asked for the GPU gets it or an error.

use fzpack::szp::Config;

use crate::codec::Wrap;
#[cfg(feature = "cuda")]
use crate::fail::lib;
use crate::fail::{Fail, Kind};

/// The GPU handle.
#[cfg(feature = "cuda")]
pub use fzpack::gpu::Gpu as Device;
/// The GPU handle: none can exist without the `cuda` feature ([`open`] fails instead).
#[cfg(not(feature = "cuda"))]
pub enum Device {}

/// An element type the GPU path takes (f32, f64).
#[cfg(feature = "cuda")]
pub trait GpuElem: Wrap + fzpack::gpu::GpuFloat {}
/// An element type the GPU path takes (f32, f64).
#[cfg(not(feature = "cuda"))]
pub trait GpuElem: Wrap {}
impl GpuElem for f32 {}
impl GpuElem for f64 {}

/// Device 0 when `wanted`, or the error that says why not.
pub fn open(wanted: bool) -> Result<Option<Device>, Fail> {
    if !wanted {
        return Ok(None);
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err(Fail::new(
            Kind::Usage,
            "--gpu: this fzpack was built without the cuda feature; rebuild with --features \
             cuda (cargo build --release -p fzpack-cli --features cuda), or drop --gpu to run \
             on the CPU",
        ))
    }
    #[cfg(feature = "cuda")]
    {
        fzpack::gpu::Gpu::new(0)
            .map(Some)
            .map_err(|e| fail("--gpu", e))
    }
}

#[cfg(feature = "cuda")]
fn fail(nm: &str, e: fzpack::gpu::Error) -> Fail {
    use fzpack::gpu::Error as E;
    match e {
        E::NoDriver | E::NoNvrtc | E::NoDevice => Fail::new(
            Kind::Usage,
            format!(
                "--gpu: no usable CUDA GPU: {e}; fzpack does not fall back to the CPU (drop \
                 --gpu to run there)"
            ),
        ),
        E::Szp(s) => lib(nm, s.into()),
        E::TooLarge => Fail::new(Kind::Input, format!("{nm}: {e}")),
        E::InterpLayout => Fail::new(Kind::Usage, format!("{nm}: --gpu: {e}")),
        other => Fail::new(Kind::Io, format!("{nm}: GPU: {other}")),
    }
}

/// SZp archive bytes of `values` (native archive) on the GPU; SZp errors as the CPU's.
pub fn compress<T: GpuElem>(
    d: &Device,
    nm: &str,
    values: &[T],
    cfg: &Config,
) -> Result<Vec<u8>, Fail> {
    #[cfg(feature = "cuda")]
    {
        d.compress(values, cfg).map_err(|e| fail(nm, e))
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (nm, values, cfg);
        match *d {}
    }
}

/// The values of an SZp archive, decoded (checksums verified) on the GPU.
pub fn decompress<T: GpuElem>(d: &Device, nm: &str, archive: &[u8]) -> Result<Vec<T>, Fail> {
    #[cfg(feature = "cuda")]
    {
        d.decompress(archive).map_err(|e| fail(nm, e))
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (nm, archive);
        match *d {}
    }
}
