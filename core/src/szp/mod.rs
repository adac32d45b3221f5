//! SZp error-bounded compression (fZ-light, SC'24).
//!
//! Work in progress: see issue 4.
