//! What the PERNIX SIMD leaves of every ISA share: the safe entry points of a proof token, the
//! block loop of the 8-value-group compressors (AVX2, NEON) and the per-width table builder.

/// Implements the safe PERNIX entry points `compress`/`decompress` of the proof token `$token`
/// over the kernel leaf module `$leaf`, whose `compress(Run, &[F], F, &mut [u8])` and
/// `decompress(Run, &[u8], F, &mut [F])` (`F` = `f32` or `f64`) are unsafe only for the
/// leaf's target features. `$doc` names the kernels.
macro_rules! pernix_entry_points {
    ($token:ty, $leaf:ident, $doc:literal) => {
        impl $token {
            #[doc = concat!("Compresses whole blocks with the ", $doc, " kernels; same contract as")]
            /// [`crate::pernix::scalar::compress`] (lengths checked by the caller; the shorter
            /// side decides the number of blocks, nothing panics).
            pub fn compress<T: $crate::types::PernixFloat>(
                self,
                run: $crate::types::Run,
                input: &[T],
                inverse_scale: T,
                output: &mut [u8],
            ) {
                use $crate::types::sealed::Scaled;
                match T::scaled(input, inverse_scale) {
                    // SAFETY: the token proves the CPU supports the leaf's target features.
                    Scaled::F32(x, inv) => unsafe { $leaf::compress(run, x, inv, output) },
                    // SAFETY: the token proves the CPU supports the leaf's target features.
                    Scaled::F64(x, inv) => unsafe { $leaf::compress(run, x, inv, output) },
                }
            }

            #[doc = concat!("Decompresses whole blocks with the ", $doc, " kernels; same contract")]
            /// as [`crate::pernix::scalar::decompress`].
            pub fn decompress<T: $crate::types::PernixFloat>(
                self,
                run: $crate::types::Run,
                input: &[u8],
                scale: T,
                output: &mut [T],
            ) {
                use $crate::types::sealed::ScaledMut;
                match T::scaled_mut(output, scale) {
                    // SAFETY: the token proves the CPU supports the leaf's target features.
                    ScaledMut::F32(out, s) => unsafe { $leaf::decompress(run, input, s, out) },
                    // SAFETY: the token proves the CPU supports the leaf's target features.
                    ScaledMut::F64(out, s) => unsafe { $leaf::decompress(run, input, s, out) },
                }
            }
        }
    };
}
pub(crate) use pernix_entry_points;

/// `[f(0); 25]` with entry `n` = `f(n)` for every bit width 1..=24: a per-width table of a
/// `const fn f`, built at compile time (index 0 unused).
macro_rules! by_width {
    ($f:ident) => {{
        let mut all = [$f(0); 25];
        let mut n = 1;
        while n <= 24 {
            all[n] = $f(n);
            n += 1;
        }
        all
    }};
}
pub(crate) use by_width;

/// The block loop of the 8-value-group compressors (8 values of N bits are N bytes): for every
/// whole block of `input` and `output` (`bs` bytes holding `floor(8·bs/n)` values), calls
/// `put(output, at, values, bytes)` for each group of 8 values at byte `at` of `output` —
/// `bytes` = `n` for a whole group, `ceil(len·n/8)` for the block's last, shorter one — then
/// zeros the block from its last value byte to its end. `put` may write past its group's
/// bytes (only bytes written again later, in increasing address order).
#[inline(always)]
pub(crate) fn compress_groups<T>(
    n: usize,
    bs: usize,
    input: &[T],
    output: &mut [u8],
    mut put: impl FnMut(&mut [u8], usize, &[T], usize),
) {
    let Some(epb) = (bs * 8).checked_div(n) else {
        return;
    };
    if epb == 0 {
        return;
    }
    let used = (epb * n).div_ceil(8);
    let (groups, tail) = (epb / 8, epb % 8);
    let mut at = 0;
    for (bin, _) in input.chunks_exact(epb).zip(0..output.len() / bs) {
        let block_end = at + bs;
        let mut o = at;
        let mut values = bin.chunks_exact(8);
        for g in values.by_ref().take(groups) {
            put(output, o, g, n);
            o += n;
        }
        if tail > 0 {
            put(output, o, values.remainder(), (tail * n).div_ceil(8));
        }
        if let Some(rest) = output.get_mut(at + used..block_end) {
            rest.fill(0);
        }
        at = block_end;
    }
}

/// The first 8 values of `x`, zero-padded when `x` is shorter (a block's last group).
#[inline(always)]
pub(crate) fn group_of<T: Copy + Default>(x: &[T]) -> [T; 8] {
    if let Some(g) = x.first_chunk::<8>() {
        *g
    } else {
        let mut g = [T::default(); 8];
        for (d, s) in g.iter_mut().zip(x) {
            *d = *s;
        }
        g
    }
}

/// `impl Lanes for $t` of every element type `$t` of a SIMD leaf whose kernels need the
/// target features `$feature` (the leaf's own `Lanes` trait and `Quant` struct, naming what
/// its kernels do differently for f32 and f64): `type V = $v`, `splat` by the broadcast
/// `$splat`, `quant` (the loop-invariant vectors of a compression at N bits, the code mask
/// broadcast by `$mask`), the leaf's constants and its other methods, each `#[inline]` and
/// compiled for `$feature`, so that each is unsafe only for those CPU features.
macro_rules! lanes {
    ($feature:literal, $mask:ident;
     $($t:ty, $v:ty, $splat:ident {
         $(const $c:ident: $ct:ty = $cv:expr;)*
         $(unsafe fn $name:ident($($arg:tt: $at:ty),* $(,)?) $(-> $ret:ty)? $body:block)*
     })*) => {
        $(
            impl Lanes for $t {
                type V = $v;
                $(const $c: $ct = $cv;)*

                #[inline]
                #[target_feature(enable = $feature)]
                unsafe fn splat(x: $t) -> $v {
                    $splat(x)
                }

                #[inline]
                #[target_feature(enable = $feature)]
                unsafe fn quant(inv: $t, n: u32) -> Quant<$v> {
                    let (lo, hi) = $crate::types::code_range(n);
                    Quant {
                        inv: $splat(inv),
                        lo: $splat(lo as $t),
                        hi: $splat(hi as $t),
                        mask: $mask(((1u64 << n) - 1) as _),
                    }
                }

                $(
                    #[inline]
                    #[target_feature(enable = $feature)]
                    unsafe fn $name($($arg: $at),*) $(-> $ret)? $body
                )*
            }
        )*
    };
}
pub(crate) use lanes;
