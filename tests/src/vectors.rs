//! Reader for the PERNIX golden vector files (`vectors_f32.bin`, `vectors_f64.bin`).
