//! The PERNIX C ABI from the outside: the header agrees with the Rust signatures, the PERNIX
//! documentation's C and C++ examples build unmodified against our headers and library and
//! exit 0, a C test checks every validation status, a Fortran program round-trips, and an
//! installed copy is found by CMake `find_package` and by pkg-config.
//!
//! The tool tests need gcc, g++, gfortran, cmake and pkg-config. A missing tool is reported as
//! "skipped: …" in the output; with `FZPACK_REQUIRE_TOOLS=1` (as `.ci/run` sets) it fails.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn target_dir() -> PathBuf {
    root().join("target/capi-check")
}

fn have(tool: &str) -> bool {
    let ok = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        let msg =
            format!("skipped: `{tool}` is not installed (apt-get install it to run this test)");
        assert!(
            std::env::var_os("FZPACK_REQUIRE_TOOLS").is_none(),
            "{msg}, but FZPACK_REQUIRE_TOOLS is set"
        );
        println!("{msg}");
    }
    ok
}

/// Builds the release libpernix once per test run (separate target dir: no lock on ours).
fn lib_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let st = Command::new(cargo)
            .args([
                "build",
                "--release",
                "--quiet",
                "-p",
                "fzpack-capi",
                "--manifest-path",
            ])
            .arg(root().join("Cargo.toml"))
            .arg("--target-dir")
            .arg(target_dir())
            .status()
            .expect("run cargo");
        assert!(st.success(), "building libpernix failed");
        target_dir().join("release")
    })
}

/// A test's scratch directory under the system temp dir: removed when the test passes (each
/// run left about 75 MB of builds and installs behind before), kept and named when it fails.
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("kept for inspection: {}", self.0.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn scratch(name: &str) -> Scratch {
    let d = std::env::temp_dir().join(format!("fzpack-capi-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    Scratch(d)
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "{cmd:?} failed ({:?}):\n{text}",
        out.status.code()
    );
    text
}

fn static_link(cmd: &mut Command) -> &mut Command {
    cmd.arg(lib_dir().join("libpernix.a"))
        .args(["-lpthread", "-ldl", "-lm"])
}

fn reference(name: &str) -> Option<PathBuf> {
    let p = root().join("../shared/reference").join(name);
    if p.is_file() {
        Some(p)
    } else {
        println!(
            "skipped: {} is not present (the PERNIX documentation examples live in ../shared/reference)",
            p.display()
        );
        None
    }
}

#[test]
fn documentation_examples_build_unmodified_and_exit_0() {
    if !(have("gcc") && have("g++")) {
        return;
    }
    let inc = root().join("capi/include");
    let dir = scratch("examples");
    if let Some(c) = reference("pernix_example.c") {
        // c99: the plain prototypes; c11 and later: the same calls through the _Generic macros.
        for std in ["c99", "c11", "c17"] {
            let exe = dir.join(format!("example_{std}"));
            run(static_link(
                Command::new("gcc")
                    .arg(format!("-std={std}"))
                    .args(["-Wall", "-Wextra", "-Werror"])
                    .arg("-I")
                    .arg(&inc)
                    .arg(&c)
                    .arg("-o")
                    .arg(&exe),
            ));
            run(&mut Command::new(&exe));
            println!("pernix_example.c (-std={std}): built unmodified, exit 0");
        }
    }
    if let Some(cpp) = reference("pernix_example.cpp") {
        let exe = dir.join("example_cpp");
        run(static_link(
            Command::new("g++")
                .args(["-std=c++20", "-Wall", "-Werror"])
                .arg("-I")
                .arg(&inc)
                .arg(&cpp)
                .arg("-o")
                .arg(&exe),
        ));
        run(&mut Command::new(&exe));
        println!("pernix_example.cpp: built unmodified, exit 0");
    }
}

#[test]
fn c_validation_statuses() {
    if !have("gcc") {
        return;
    }
    let dir = scratch("validation");
    let exe = dir.join("validation");
    run(static_link(
        Command::new("gcc")
            .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"])
            .arg("-I")
            .arg(root().join("capi/include"))
            .arg(root().join("capi/tests/c/validation.c"))
            .arg("-o")
            .arg(&exe),
    ));
    let out = run(&mut Command::new(&exe));
    assert!(out.contains("all checks passed"), "{out}");
}

/// Compiles `files` (C unless `.cpp`) with warnings as errors, links libpernix.a, runs it and
/// checks that it printed "all checks passed".
fn build_and_run(name: &str, std: &str, files: &[&str]) {
    let dir = scratch(name);
    let exe = dir.join(name);
    let cpp = files.iter().any(|f| f.ends_with(".cpp"));
    let mut cmd = Command::new(if cpp { "g++" } else { "gcc" });
    cmd.arg(format!("-std={std}"))
        .args(["-Wall", "-Wextra", "-Werror", "-pedantic"])
        .arg("-I")
        .arg(root().join("capi/include"));
    for f in files {
        cmd.arg(root().join("capi/tests").join(f));
    }
    run(static_link(cmd.arg("-o").arg(&exe)));
    let out = run(&mut Command::new(&exe));
    print!("{out}");
    assert!(out.contains("all checks passed"), "{out}");
}

/// A destroyed dispatcher is reported on every entry point, a second destroy is a no-op.
#[test]
fn c_destroyed_handles_are_detected() {
    if have("gcc") {
        build_and_run("lifetime", "c11", &["c/lifetime.c"]);
    }
}

/// The backend-enum form from C11 source with our header: every backend value, bad values,
/// and the dispatcher form in the same file.
#[test]
fn c_backend_enum_form_compiles_warning_free_and_matches_dispatchers() {
    if have("gcc") {
        build_and_run("backend-enum", "c11", &["c/backend_enum.c"]);
        build_and_run("backend-enum-17", "c17", &["c/backend_enum.c"]);
    }
}

/// Binary drop-in: an object compiled against upstream's own prototypes (no header of ours),
/// linked with our library.
#[test]
fn c_object_built_against_upstream_prototypes_links_and_runs() {
    if !have("gcc") {
        return;
    }
    let dir = scratch("upstream-abi");
    let obj = dir.join("upstream_abi.o");
    run(Command::new("gcc")
        .args([
            "-std=c11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-O2",
            "-c",
        ])
        .arg(root().join("capi/tests/c/upstream_abi.c"))
        .arg("-o")
        .arg(&obj));
    let exe = dir.join("upstream_abi");
    run(static_link(
        Command::new("gcc")
            .args(["-std=c11", "-Wall", "-Wextra", "-Werror"])
            .arg("-I")
            .arg(root().join("capi/include"))
            .arg(root().join("capi/tests/c/upstream_abi_main.c"))
            .arg(&obj)
            .arg("-o")
            .arg(&exe),
    ));
    let out = run(&mut Command::new(&exe));
    print!("{out}");
    assert!(out.contains("all checks passed"), "{out}");
}

/// The C++ free functions over std::span, every backend, beside pernix::Dispatcher.
#[test]
fn cpp_free_functions_match_dispatcher() {
    if have("g++") {
        build_and_run("free-functions", "c++20", &["cpp/free_functions.cpp"]);
    }
}

#[test]
fn c_szp_round_trip_and_statuses() {
    if !have("gcc") {
        return;
    }
    let dir = scratch("szp");
    let exe = dir.join("szp");
    run(static_link(
        Command::new("gcc")
            .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"])
            .arg("-I")
            .arg(root().join("capi/include"))
            .arg(root().join("capi/tests/c/szp.c"))
            .arg("-o")
            .arg(&exe),
    ));
    let out = run(&mut Command::new(&exe));
    assert!(out.contains("all checks passed"), "{out}");
}

#[test]
fn header_compiles_as_c_and_cpp_with_strict_flags() {
    if !(have("gcc") && have("g++")) {
        return;
    }
    let dir = scratch("header");
    let c = dir.join("h.c");
    std::fs::write(&c, "#include <pernix/pernix.h>\nint main(void) { return pernix_min_bit_width() == 1 ? 0 : 1; }\n").unwrap();
    let inc = root().join("capi/include");
    run(Command::new("gcc")
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-c"])
        .arg("-I")
        .arg(&inc)
        .arg(&c)
        .arg("-o")
        .arg(dir.join("h.o")));
    let cpp = dir.join("h.cpp");
    std::fs::write(&cpp, "#include <pernix/pernix.hpp>\nstatic_assert(pernix::elements_per_block(7) == 73);\nint main() { pernix::Dispatcher d; return d.valid() ? 1 : 0; }\n").unwrap();
    run(Command::new("g++")
        .args([
            "-std=c++20",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-c",
        ])
        .arg("-I")
        .arg(&inc)
        .arg(&cpp)
        .arg("-o")
        .arg(dir.join("hpp.o")));
}

#[test]
fn fortran_round_trip() {
    if !have("gfortran") {
        return;
    }
    let dir = scratch("fortran");
    let exe = dir.join("roundtrip");
    let f = root().join("capi/fortran");
    run(static_link(
        Command::new("gfortran")
            .args(["-Wall", "-Werror", "-std=f2008"])
            .arg(format!("-J{}", dir.display()))
            .arg(f.join("pernix.f90"))
            .arg(f.join("roundtrip.f90"))
            .arg("-o")
            .arg(&exe),
    ));
    let out = run(&mut Command::new(&exe));
    assert!(out.contains("fortran round trip ok"), "{out}");
    print!("{out}");
}

#[test]
fn install_then_find_package_and_pkg_config() {
    if !(have("cmake") && have("pkg-config") && have("gcc")) {
        return;
    }
    let (Some(c), Some(cpp)) = (
        reference("pernix_example.c"),
        reference("pernix_example.cpp"),
    ) else {
        return;
    };
    lib_dir(); // build first so the install script only copies
    let prefix = scratch("prefix");
    run(Command::new("bash")
        .arg(root().join("capi/install.sh"))
        .arg(&prefix)
        .env("CARGO_TARGET_DIR", target_dir()));
    let build = scratch("consumer-build");
    run(Command::new("cmake")
        .arg("-S")
        .arg(root().join("capi/tests/consumer"))
        .arg("-B")
        .arg(&build)
        .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display()))
        .arg(format!("-DEXAMPLE_C={}", c.display()))
        .arg(format!("-DEXAMPLE_CPP={}", cpp.display())));
    run(Command::new("cmake").arg("--build").arg(&build));
    let lib = prefix.join("lib");
    // SONAME: the library names itself libpernix.so.0, and the consumer records that name.
    if have("readelf") {
        let dynamic = run(Command::new("readelf")
            .arg("-d")
            .arg(lib.join("libpernix.so.0")));
        assert!(
            dynamic.contains("[libpernix.so.0]"),
            "no SONAME libpernix.so.0:\n{dynamic}"
        );
        let needed = run(Command::new("readelf")
            .arg("-d")
            .arg(build.join("consumer_c")));
        assert!(
            needed.contains("Shared library: [libpernix.so.0]"),
            "{needed}"
        );
    }
    run(Command::new(build.join("consumer_c")).env("LD_LIBRARY_PATH", &lib));
    run(&mut Command::new(build.join("consumer_cpp")));
    // pkg-config
    let flags = run(Command::new("pkg-config")
        .args(["--cflags", "--libs", "pernix"])
        .env("PKG_CONFIG_PATH", lib.join("pkgconfig")));
    let exe = build.join("pkgconfig_c");
    run(Command::new("gcc")
        .arg(&c)
        .arg("-o")
        .arg(&exe)
        .args(flags.split_whitespace()));
    run(Command::new(&exe).env("LD_LIBRARY_PATH", &lib));
    println!(
        "installed to {}: find_package and pkg-config consumers built and ran",
        prefix.display()
    );
}

/// Every prototype in `pernix.h` matches the exported Rust function's signature, and every
/// exported function is declared. The Rust side is checked by the compiler (each function is
/// coerced to the pointer type of its row); the C side by parsing the header.
#[test]
fn header_matches_rust_signatures() {
    use core::ffi::{c_char, c_int, c_void};
    use pernix::*;
    type D = PernixDispatcher;
    macro_rules! rows {
        ($($name:ident : ($($arg:ty),*) -> $ret:ty;)*) => {{
            let mut v: Vec<(&str, Vec<&str>, &str)> = Vec::new();
            $(
                let _f: unsafe extern "C" fn($($arg),*) -> $ret = $name;
                v.push((stringify!($name), vec![$(stringify!($arg)),*], stringify!($ret)));
            )*
            v
        }};
    }
    let rust = rows! {
        pernix_min_bit_width: () -> u8;
        pernix_max_bit_width: () -> u8;
        pernix_is_valid_bit_width: (u8) -> bool;
        pernix_is_valid_block_size: (u32) -> bool;
        pernix_compressed_block_size: () -> u32;
        pernix_elements_per_block: (u8) -> u32;
        pernix_status_string: (c_int) -> *const c_char;
        pernix_scale_f32: (f32, u8, *mut f32) -> c_int;
        pernix_scale_f64: (f64, u8, *mut f64) -> c_int;
        pernix_decompression_scale_f32: (f32, u8, *mut f32) -> c_int;
        pernix_decompression_scale_f64: (f64, u8, *mut f64) -> c_int;
        pernix_inverse_scale_f32: (f32, *mut f32) -> c_int;
        pernix_inverse_scale_f64: (f64, *mut f64) -> c_int;
        pernix_compression_scale_f32: (f32, u8, *mut f32) -> c_int;
        pernix_compression_scale_f64: (f64, u8, *mut f64) -> c_int;
        pernix_dispatcher_create: (c_int, *mut *mut D) -> c_int;
        pernix_dispatcher_destroy: (*mut D) -> ();
        pernix_dispatcher_backend: (*const D) -> c_int;
        pernix_compress_block_f32: (*const D, u8, u32, *const c_void, f32, *mut c_void) -> c_int;
        pernix_compress_blocks_f32: (*const D, u8, u32, *const c_void, f32, *mut c_void, u32) -> c_int;
        pernix_decompress_block_f32: (*const D, u8, u32, *const c_void, f32, *mut c_void, bool) -> c_int;
        pernix_decompress_blocks_f32: (*const D, u8, u32, *const c_void, f32, *mut c_void, u32, bool) -> c_int;
        pernix_compress_block_f64: (*const D, u8, u32, *const c_void, f64, *mut c_void) -> c_int;
        pernix_compress_blocks_f64: (*const D, u8, u32, *const c_void, f64, *mut c_void, u32) -> c_int;
        pernix_decompress_block_f64: (*const D, u8, u32, *const c_void, f64, *mut c_void, bool) -> c_int;
        pernix_decompress_blocks_f64: (*const D, u8, u32, *const c_void, f64, *mut c_void, u32, bool) -> c_int;
    };
    fn c_of(rust: &str) -> &'static [&'static str] {
        match rust.replace(' ', "").as_str() {
            "u8" => &["u8"],
            "u32" => &["u32"],
            "f32" => &["float"],
            "f64" => &["double"],
            "bool" => &["bool"],
            "()" => &["void"],
            "c_int" => &["pernix_status", "pernix_backend", "int"],
            "*constc_char" => &["const char*"],
            "*mutf32" => &["float*"],
            "*mutf64" => &["double*"],
            "*constc_void" => &["const void*"],
            "*mutc_void" => &["void*"],
            "*constD" => &["const pernix_dispatcher*"],
            "*mutD" => &["pernix_dispatcher*"],
            "*mut*mutD" => &["pernix_dispatcher**"],
            other => panic!("no C mapping for Rust type {other}"),
        }
    }
    let header = std::fs::read_to_string(root().join("capi/include/pernix/pernix.h")).unwrap();
    let mut declared = std::collections::BTreeMap::new();
    for line in header
        .lines()
        .filter_map(|l| l.trim().strip_prefix("PERNIX_API "))
    {
        let (head, rest) = line.split_once('(').expect("prototype");
        let params = rest.trim_end_matches(';').trim_end_matches(')');
        let name = head
            .split_whitespace()
            .last()
            .unwrap()
            .trim_start_matches('*');
        let ret = head[..head.len() - name.len()].trim().to_string();
        let types: Vec<String> = if params.trim() == "void" {
            Vec::new()
        } else {
            params
                .split(',')
                .map(|p| {
                    let p = p.trim();
                    let cut = p
                        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
                        .map_or(0, |i| i + 1);
                    p[..cut].replace(" *", "*").trim().to_string()
                })
                .collect()
        };
        declared.insert(name.to_string(), (ret, types));
    }
    let norm = |s: &str| s.replace(" *", "*");
    for (name, args, ret) in &rust {
        let (cret, cargs) = declared
            .remove(*name)
            .unwrap_or_else(|| panic!("{name} is exported but not declared in pernix.h"));
        assert!(
            c_of(ret).contains(&norm(&cret).as_str()),
            "{name}: returns {cret} in C, {ret} in Rust"
        );
        assert_eq!(cargs.len(), args.len(), "{name}: arity differs");
        for (i, (c, r)) in cargs.iter().zip(args).enumerate() {
            assert!(
                c_of(r).contains(&c.as_str()),
                "{name} parameter {i}: {c} in C, {r} in Rust"
            );
        }
    }
    assert!(
        declared.is_empty(),
        "declared in pernix.h but not exported: {:?}",
        declared.keys()
    );
    println!("pernix.h: {} prototypes match the Rust exports", rust.len());
}
