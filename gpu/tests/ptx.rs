//! Every kernel in gpu/kernels/ compiles to PTX for sm_80 (A100) and sm_90 (H100/H200) with NVRTC,
//! loaded dynamically (no GPU needed). Without NVRTC the test says "skipped: …"; with
//! `FZPACK_REQUIRE_TOOLS=1` (as `.ci/run` sets, after `scripts/nvrtc.sh`) it fails instead.
//! With `FZPACK_PTX_OUT=<dir>` the PTX files are written there (what `scripts/gpu-check.sh
//! --prepare` carries to a GPU machine that lacks NVRTC).

use fzpack_gpu::{
    KERNEL_NAMES, compile_ptx, nvrtc_available, nvrtc_supported_archs, nvrtc_version,
};

fn nvrtc_or_skip() -> bool {
    if nvrtc_available() {
        return true;
    }
    let msg = "NVRTC (libnvrtc.so) not found; scripts/nvrtc.sh installs it";
    assert!(
        std::env::var_os("FZPACK_REQUIRE_TOOLS").is_none(),
        "{msg}, but FZPACK_REQUIRE_TOOLS is set"
    );
    println!("skipped: {msg}");
    false
}

#[test]
fn every_kernel_compiles_to_ptx_for_sm80_and_sm90() {
    if !nvrtc_or_skip() {
        return;
    }
    let (major, minor) = nvrtc_version().unwrap();
    let archs = nvrtc_supported_archs().unwrap();
    println!("NVRTC {major}.{minor}, architectures {archs:?}");
    assert!(
        archs.contains(&80) && archs.contains(&90),
        "NVRTC {major}.{minor} lacks sm_80/sm_90: {archs:?}"
    );
    let out = std::env::var_os("FZPACK_PTX_OUT").map(std::path::PathBuf::from);
    for (arch, target) in [
        ("compute_80", ".target sm_80"),
        ("compute_90", ".target sm_90"),
    ] {
        let t = std::time::Instant::now();
        let ptx = compile_ptx(arch).unwrap_or_else(|e| panic!("{arch}: {e}"));
        assert!(ptx.contains(target), "{arch}: no `{target}` in the PTX");
        for name in KERNEL_NAMES {
            assert!(
                ptx.contains(&format!(".entry {name}(")),
                "{arch}: kernel {name} missing from the PTX"
            );
        }
        // The warp width reduction really is the sm_80 instruction, not a shuffle loop.
        assert!(ptx.contains("redux.sync.or"), "{arch}: no redux.sync.or");
        println!(
            "{arch}: {} kernels, {} bytes of PTX in {:.1} s",
            KERNEL_NAMES.len(),
            ptx.len(),
            t.elapsed().as_secs_f64()
        );
        if let Some(dir) = &out {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::write(dir.join(format!("szp_{arch}.ptx")), &ptx).unwrap();
        }
    }
}
