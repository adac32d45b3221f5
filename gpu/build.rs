//! Builds the CPU harness of the kernel logic (feature `host-kernels`).

fn main() {
    println!("cargo:rerun-if-changed=kernels");
    #[cfg(feature = "host-kernels")]
    {
        cc::Build::new()
            .cpp(true)
            .file("kernels/host_harness.cpp")
            .include("kernels")
            .std("c++17")
            .flag_if_supported("-ffp-contract=off")
            .flag_if_supported("-fno-fast-math")
            .opt_level(2)
            .warnings(true)
            .compile("fzpack_szp_host");
    }
}
