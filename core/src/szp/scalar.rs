//! The scalar SZp path, a direct reading of the spec on top of [`super::blocks`]: the reference
//! that other paths (parallel, GPU) must match byte for byte.

use super::blocks::{
    self, block_payload_len, block_width, decode_block, encode_block, write_header,
};
use super::{Config, DType, Error, SzpFloat, max_compressed_len};

mod onepass;

/// Compresses `input` into `out`; returns the archive length. See [`super::compress`].
pub fn compress<T: SzpFloat>(input: &[T], cfg: &Config, out: &mut [u8]) -> Result<usize, Error> {
    let plan = blocks::plan(input, cfg)?;
    let too_small = || Error::OutputTooSmall {
        needed: max_compressed_len(input.len(), cfg.block_size, T::DTYPE).unwrap_or(usize::MAX),
    };
    let start = plan.payload_offset();
    if out.len() < start {
        return Err(too_small());
    }
    let (head, body) = out.split_at_mut(start);
    let (hdr, widths) = head
        .split_at_mut_checked(super::HEADER_LEN)
        .ok_or_else(too_small)?;
    let mut pos = 0usize;
    for ((b, block), wslot) in input
        .chunks(cfg.block_size.max(1) as usize)
        .enumerate()
        .zip(widths.iter_mut())
    {
        let first = b * cfg.block_size as usize;
        let rest = body.get_mut(pos..).ok_or_else(too_small)?;
        let w = match onepass::encode_block(&plan, block, rest, first)? {
            Some(w) => w,
            None => {
                // Too little room for the one-pass scratch: the two-pass block encoder.
                let w = block_width(&plan, block);
                let cost = block_payload_len(w, block.len());
                let dst = body.get_mut(pos..pos + cost).ok_or_else(too_small)?;
                encode_block(&plan, block, w, dst, first)?;
                w
            }
        };
        let cost = block_payload_len(w, block.len());
        *wslot = w;
        pos += cost;
    }
    write_header(&plan, hdr)?;
    Ok(start + pos)
}

/// Decompresses an archive into `out`; returns the number of values. See
/// [`super::decompress`].
pub fn decompress<T: SzpFloat>(archive: &[u8], out: &mut [T]) -> Result<usize, Error> {
    let view = blocks::parse(archive)?;
    if view.header.dtype != T::DTYPE {
        return Err(Error::DTypeMismatch);
    }
    let out = out
        .get_mut(..view.n)
        .ok_or(Error::OutputTooSmall { needed: view.n })?;
    let bs = view.header.block_size as usize;
    let mut pos = 0usize;
    for (&w, block) in view.widths.iter().zip(out.chunks_mut(bs.max(1))) {
        let cost = block_payload_len(w, block.len());
        let src = view.payload.get(pos..pos + cost).ok_or(Error::Truncated)?;
        decode_block(view.header.quant_eb, w, src, block)?;
        pos += cost;
    }
    Ok(view.n)
}

/// The element type an archive holds (without decoding it).
pub fn dtype(archive: &[u8]) -> Result<DType, Error> {
    Ok(super::Header::read(archive)?.dtype)
}
