//! The bench run: every dataset, setting and path measured into rows, then printed as a
//! table or JSON, and plotted.

use super::args::{BenchArgs, load, paths, paths_for, settings};
use super::plot;
use super::report::{Footer, Row, rd_series, table, to_json};
use super::timing::{Case, Kernels, Run, backend_name, load1, memcpy_gbps, time_pernix, time_szp};
use crate::codec::{Engines, LayoutArg, PathKind, Setting, Values, Wrap, worst_ratio};
use crate::data;
use crate::dispatch;
use crate::fail::{Fail, Kind};
use crate::szpcli;
use fzpack::szp::Config;

/// `fzpack bench`: measures every dataset, setting and path, prints the table (or JSON) and
/// draws the plot.
pub fn run(args: BenchArgs) -> Result<(), Fail> {
    if let Some(p) = &args.plot
        && p.exists()
        && !args.force
    {
        return Err(Fail::new(
            Kind::Exists,
            format!("{} already exists (use --force to overwrite)", p.display()),
        ));
    }
    if !(args.min_time.is_finite() && args.min_time >= 0.0) {
        return Err(Fail::new(Kind::Usage, "--min-time must be >= 0"));
    }
    let eng = Engines::new(args.threads)?;
    let kernels: Vec<Kernels> = if args.isa.is_empty() {
        vec![Kernels::new(None, &eng)?]
    } else {
        let mut ks = Vec::new();
        for (i, isa) in args.isa.iter().enumerate() {
            if !args.isa[..i].contains(isa) {
                ks.push(Kernels::new(Some(*isa), &eng)?);
            }
        }
        ks
    };
    let settings = settings(&args)?;
    let datasets = load(&args)?;
    let paths = paths(&args);
    let total = (datasets.len() * settings.len()) as u64;
    let pb = indicatif::ProgressBar::new(total);
    pb.set_style(
        indicatif::ProgressStyle::with_template("{msg:>24} [{bar:30}] {pos}/{len}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let load_start = load1();
    let mut rows = Vec::new();
    let mut copies = Vec::new();
    for ds in &datasets {
        let before = memcpy_gbps(ds.values.bytes(), args.min_time);
        let mut r = Run {
            eng: &eng,
            ks: &kernels,
            paths: &paths,
            min_time: args.min_time,
            e2e: args.e2e,
            memcpy: before,
        };
        let first = rows.len();
        let missing = match &ds.values {
            Values::F32(v) => v.iter().filter(|x| !x.is_finite()).count(),
            Values::F64(v) => v.iter().filter(|x| !x.is_finite()).count(),
        };
        if missing > 0 && settings.iter().any(|s| matches!(s, Setting::Pernix { .. })) {
            pb.suspend(|| {
                eprintln!(
                    "fzpack: {}: {missing} missing values (NaN, ±inf): SZp keeps them exactly \
                     (errors over the finite values); PERNIX needs finite values, left out",
                    ds.name
                )
            });
        }
        for s in &settings {
            pb.set_message(format!("{} {}", s.codec(), s.label()));
            if missing > 0 && matches!(s, Setting::Pernix { .. }) {
                pb.inc(1);
                continue;
            }
            let ps = paths_for(&args, s, &paths);
            let rs = Run { paths: &ps, ..r };
            match &ds.values {
                Values::F32(v) => bench_one(&ds.name, v, ds.dims.as_deref(), s, &rs, &mut rows)?,
                Values::F64(v) => bench_one(&ds.name, v, ds.dims.as_deref(), s, &rs, &mut rows)?,
            }
            pb.inc(1);
        }
        // M is the better of a copy before and after the dataset's rows (the machine is
        // shared: the faster one is the closer to the real copy speed).
        let after = memcpy_gbps(ds.values.bytes(), args.min_time);
        r.memcpy = (before.0.max(after.0), before.1.max(after.1));
        let (m, mc) = r.memcpy;
        for row in &mut rows[first..] {
            row.memcpy_gbps = m;
            row.compress_vs_memcpy = row.compress_gbps / m;
            row.decompress_vs_memcpy = row.decompress_gbps / m;
            row.memcpy_cpu_gbps = mc;
            row.compress_cpu_vs_memcpy = row.compress_cpu_gbps / mc;
            row.decompress_cpu_vs_memcpy = row.decompress_cpu_gbps / mc;
        }
        copies.push((ds.name.clone(), ds.values.bytes().len(), m, mc));
    }
    pb.finish_and_clear();
    let foot = Footer {
        threads: eng.par.threads(),
        e2e: args.e2e,
        isa: kernels.iter().map(|k| k.isa).collect::<Vec<_>>().join(", "),
        copies,
        load: (load_start, load1()),
    };
    // With `--plot -` the SVG is standard output's payload: the table goes to stderr.
    let plot_stdout = args.plot.as_ref().is_some_and(|p| p.as_os_str() == "-");
    let text = if args.json {
        format!("{}\n", to_json(&rows)?)
    } else {
        table(&rows, &foot)
    };
    if plot_stdout {
        eprint!("{text}");
    } else {
        print!("{text}");
    }
    if let Some(p) = &args.plot {
        let svg = plot::svg(rd_series(&rows));
        data::write_output(p, svg.as_bytes(), args.force)?;
        eprintln!("fzpack: wrote {}", p.display());
    }
    Ok(())
}

/// The SZp config of `s` (none for PERNIX): the interpolation layout gets the dataset's
/// dimensions when known (it predicts over them); the block layouts stay 1-D, as before.
fn szp_config(file: &str, s: &Setting, dims: Option<&[usize]>) -> Result<Option<Config>, Fail> {
    let Setting::Szp {
        mode,
        eb,
        block,
        layout,
    } = *s
    else {
        return Ok(None);
    };
    let cfg = szpcli::config(mode, eb, block, layout);
    if layout == LayoutArg::Interp {
        return szpcli::with_shape(file, cfg, dims).map(Some);
    }
    Ok(Some(cfg))
}

fn bench_one<T: Wrap>(
    file: &str,
    values: &[T],
    dims: Option<&[usize]>,
    s: &Setting,
    r: &Run,
    rows: &mut Vec<Row>,
) -> Result<(), Fail> {
    let raw_bytes = values.len() * T::BYTES;
    let raw = raw_bytes as f64;
    let cfg = szp_config(file, s, dims)?;
    let reference = match &cfg {
        Some(c) => szpcli::encode(file, values, c, PathKind::Scalar, r.eng, false)?,
        None => dispatch::compress(file, values, s, PathKind::Scalar, r.eng, false)?,
    };
    let dec = dispatch::decompress(file, &reference, PathKind::Scalar, r.eng)?;
    let ref_bits = dec.to_le_bytes();
    let dec = T::unwrap(dec).ok_or_else(|| {
        Fail::new(
            Kind::Corrupt,
            format!("{file}: decoded element type differs"),
        )
    })?;
    if let (_, Some(i)) = data::missing_mismatch(values, &dec) {
        return Err(Fail::new(
            Kind::Corrupt,
            format!("{file}: value {i} is not decoded as it was (a missing value changed)"),
        ));
    }
    let q = data::quality(values, &dec);
    let bound = dispatch::bound(file, &reference)?;
    let (worst, _) = worst_ratio(values, &dec, &bound);
    drop(dec);
    let first = rows.len();
    // Every path times all --isa kernels in turns (`timing::best_time_turns`); rows keep the order
    // ISA by ISA, path by path.
    let mut timed: Vec<(usize, usize, Row)> = Vec::new();
    for (j, &path) in r.paths.iter().enumerate() {
        // The scalar path does not depend on --isa: measured once.
        let ks: Vec<&Kernels> = match path {
            PathKind::Scalar => r.ks.iter().take(1).collect(),
            _ => r.ks.iter().collect(),
        };
        let case = Case {
            file,
            values,
            reference: &reference,
            ref_bits: &ref_bits,
            path,
            ks: &ks,
        };
        let ts = match (*s, &cfg) {
            (Setting::Pernix { bits, block }, _) => time_pernix(&case, (bits, block), r)?,
            (Setting::Szp { .. }, Some(c)) => time_szp(&case, c, r)?,
            (Setting::Szp { .. }, None) => {
                return Err(Fail::new(Kind::Usage, "an SZp setting without a config"));
            }
        };
        for (i, (k, t)) in ks.iter().zip(ts).enumerate() {
            let kernel = match (path, s) {
                // The tile codec runs one portable implementation whatever the kernel.
                (
                    _,
                    Setting::Szp {
                        layout: LayoutArg::Interp,
                        ..
                    },
                ) => "tiles",
                (PathKind::Scalar, _) => "scalar",
                (_, Setting::Szp { .. }) => k.szp.name(),
                (_, Setting::Pernix { .. }) => backend_name(k.pernix(path).kernel_backend()),
            };
            timed.push((
                i,
                j,
                Row {
                    file: file.to_string(),
                    codec: s.codec(),
                    path: path.name(),
                    setting: s.label(),
                    ratio: raw / reference.len() as f64,
                    bits_per_value: reference.len() as f64 * 8.0 / values.len().max(1) as f64,
                    max_abs_err: q.max_abs_err,
                    bound: bound.max(),
                    err_over_bound: worst,
                    psnr_db: q.psnr_db,
                    compress_gbps: t.tc.gbps(raw).0,
                    decompress_gbps: t.td.gbps(raw).0,
                    compress_vs_scalar: f64::NAN,
                    decompress_vs_scalar: f64::NAN,
                    identical: t.same,
                    kernel,
                    isa: k.isa,
                    threads: if path == PathKind::Parallel {
                        r.eng.par.threads()
                    } else {
                        1
                    },
                    timing: if r.e2e { "e2e" } else { "warm" },
                    values: values.len(),
                    raw_bytes,
                    memcpy_gbps: r.memcpy.0,
                    compress_vs_memcpy: f64::NAN,
                    decompress_vs_memcpy: f64::NAN,
                    compress_vs_simd: f64::NAN,
                    decompress_vs_simd: f64::NAN,
                    decompress_noverify_gbps: t.td_noverify.map(|tn| tn.gbps(raw).0),
                    load1: load1(),
                    compress_cpu_gbps: t.tc.gbps(raw).1,
                    decompress_cpu_gbps: t.td.gbps(raw).1,
                    decompress_noverify_cpu_gbps: t.td_noverify.map(|tn| tn.gbps(raw).1),
                    memcpy_cpu_gbps: r.memcpy.1,
                    compress_cpu_vs_memcpy: f64::NAN,
                    decompress_cpu_vs_memcpy: f64::NAN,
                    block: match *s {
                        Setting::Szp { block, .. } => block,
                        Setting::Pernix { block, .. } => block.bytes() as u32,
                    },
                },
            ));
        }
    }
    timed.sort_by_key(|&(i, j, _)| (i, j));
    rows.extend(timed.into_iter().map(|(_, _, row)| row));
    let group = &mut rows[first..];
    let speeds = |group: &[Row], p: PathKind, isa: Option<&str>| {
        group
            .iter()
            .find(|x| x.path == p.name() && isa.is_none_or(|i| x.isa == i))
            .map_or((f64::NAN, f64::NAN), |x| {
                (x.compress_gbps, x.decompress_gbps)
            })
    };
    let (c0, d0) = speeds(group, PathKind::Scalar, None);
    let simd: Vec<(f64, f64)> = group
        .iter()
        .map(|x| speeds(group, PathKind::Simd, Some(x.isa)))
        .collect();
    for (x, (c1, d1)) in group.iter_mut().zip(simd) {
        x.compress_vs_scalar = x.compress_gbps / c0;
        x.decompress_vs_scalar = x.decompress_gbps / d0;
        x.compress_vs_simd = x.compress_gbps / c1;
        x.decompress_vs_simd = x.decompress_gbps / d1;
    }
    Ok(())
}
