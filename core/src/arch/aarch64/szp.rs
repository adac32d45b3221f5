//! SZp on aarch64: the NEON path.
