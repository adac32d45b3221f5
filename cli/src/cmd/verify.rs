//! `fzpack verify`: an archive against its original: the error bound, max error, RMSE and
//! PSNR; exit code 6 when a value is outside its bound.

use std::path::PathBuf;

use fzpack::DType;

use crate::codec::{Bound, Engines, PathKind, Values, Wrap, worst_ratio};
use crate::data;
use crate::dispatch::{self, archive_head};
use crate::fail::{Fail, Kind};
use crate::files::Input;
use crate::npy;
use crate::ui::name;

#[derive(clap::Args, Debug)]
pub struct VerifyArgs {
    /// The original: a raw file or a NumPy .npy file.
    original: PathBuf,
    /// The archive made from it.
    archive: PathBuf,
}

pub fn run(a: VerifyArgs) -> Result<(), Fail> {
    let an = name(&a.archive);
    let archive = Input::open_checked(&a.archive, archive_head(&an))?;
    let abytes = archive.bytes();
    let eng = Engines::new(None)?;
    let decoded = dispatch::decompress(&an, abytes, PathKind::Parallel, &eng)?;
    let bound = dispatch::bound(&an, abytes)?;
    let original = Input::open(&a.original)?;
    let obytes = original.bytes();
    match decoded.dtype() {
        DType::F32 => verify_t::<f32>(&a, obytes, decoded, &bound),
        DType::F64 => verify_t::<f64>(&a, obytes, decoded, &bound),
    }
}

fn verify_t<T: Wrap>(
    a: &VerifyArgs,
    obytes: &[u8],
    decoded: Values,
    bound: &Bound,
) -> Result<(), Fail> {
    let orig: Vec<T> = if obytes.starts_with(npy::MAGIC) {
        let nm = name(&a.original);
        let h = npy::parse(obytes).map_err(|m| Fail::new(Kind::Input, format!("{nm}: {m}")))?;
        if h.dtype != T::TYPE {
            return Err(Fail::new(
                Kind::Input,
                format!("{nm} holds {} values, the archive {}", h.dtype, T::TYPE),
            ));
        }
        npy::values(obytes, &h).map_err(|m| Fail::new(Kind::Input, format!("{nm}: {m}")))?
    } else {
        data::values_of(&a.original, obytes)?
    };
    let dec = T::unwrap(decoded).expect("dtype checked");
    if orig.len() != dec.len() {
        return Err(Fail::new(
            Kind::Input,
            format!(
                "{} has {} {} values, the archive {}",
                a.original.display(),
                orig.len(),
                T::TYPE,
                dec.len()
            ),
        ));
    }
    // Missing values (NaN, ±inf) must come back exactly; the bound is over the finite ones.
    let (missing, bad) = data::missing_mismatch(&orig, &dec);
    if let Some(i) = bad {
        return Err(Fail::new(
            Kind::Bound,
            format!(
                "value {i} is {:?} in the original but {:?} in the archive: missing values \
                 (NaN, ±inf) must be kept exactly and finite values stay finite",
                orig[i], dec[i]
            ),
        ));
    }
    let q = data::quality(&orig, &dec);
    let (worst, at) = worst_ratio(&orig, &dec, bound);
    println!("values      {}", orig.len());
    if missing > 0 {
        println!("missing     {missing} (NaN or ±inf), every one kept exactly");
    }
    println!("max error   {:.6e} (at index {})", q.max_abs_err, q.argmax);
    println!(
        "bound       {:.6e}{}",
        bound.max(),
        match bound {
            Bound::PerBlock { .. } => " (largest per-block bound)",
            Bound::Uniform(_) => "",
        }
    );
    println!("err/bound   {worst:.4} (worst at index {at})");
    println!("RMSE        {:.6e}", q.rmse);
    println!("PSNR        {:.2} dB", q.psnr_db);
    if worst <= 1.0 {
        println!("OK: every value is within the bound");
        Ok(())
    } else {
        Err(Fail::new(
            Kind::Bound,
            format!(
                "bound violated: value {at} is off by {:.6e}, {worst:.4} times its bound {:.6e}",
                (orig[at].to_f64() - dec[at].to_f64()).abs(),
                bound.at(at)
            ),
        ))
    }
}
