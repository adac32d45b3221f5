//! Archive validation split the way the device decoders run it: the header and the lengths on
//! the host (52 bytes read back), the body (widths, head trailers, its exact length) measured on
//! the device, and the error chosen here exactly as fzpack-core's `blocks::parse_frame` chooses
//! it, so a GPU decode never copies the compressed bytes to the host.

use fzpack_core::szp::{self, Error, HEADER_LEN, Header, blocks};

/// What the host knows of an archive before its body is walked.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Frame {
    pub header: Header,
    /// Values.
    pub n: usize,
    /// Blocks (width bytes).
    pub nb: usize,
    /// Bytes after the width bytes: body and chunk CRCs.
    pub rest: usize,
    /// Bytes of the chunk CRCs.
    pub sums: usize,
}

impl Frame {
    /// Blocks per head group (0: stage layout).
    pub fn group(&self) -> usize {
        self.header.head_group()
    }
    /// Checksum chunks.
    pub fn chunks(&self) -> usize {
        self.sums / 4
    }
    /// Archive offset of the first body byte.
    pub fn payload_offset(&self) -> usize {
        HEADER_LEN + self.nb
    }
}

/// Header (with its CRC) and lengths of an archive of `len` bytes whose first bytes are `head`
/// (at least `min(len, HEADER_LEN)` of them): `parse_frame` up to the body. Format 2 only (the
/// kernels read its 52-byte header).
pub(crate) fn frame(head: &[u8], len: usize) -> crate::Result<Frame> {
    frame_with(head, len, szp::Verify::Checksums)
}

/// [`frame`], checking the header CRC only under [`szp::Verify::Checksums`].
pub(crate) fn frame_with(head: &[u8], len: usize, verify: szp::Verify) -> crate::Result<Frame> {
    crate::refuse_interp_archive(head)?;
    let header = Header::read_with(head.get(..len.min(head.len())).unwrap_or(head), verify)?;
    if header.version != szp::FORMAT_VERSION {
        return Err(Error::UnsupportedVersion {
            version: header.version,
        }
        .into());
    }
    let rest = len.saturating_sub(HEADER_LEN);
    let nb = header.n.div_ceil(u64::from(header.block_size));
    if nb > rest as u64 {
        return Err(Error::Truncated.into());
    }
    let nb = nb as usize;
    let n = usize::try_from(header.n).map_err(|_| Error::Corrupt("element count"))?;
    let sums = blocks::sums_len(nb, header.chunk_shift);
    Ok(Frame {
        header,
        n,
        nb,
        rest: rest - nb,
        sums,
    })
}

/// What the device measured of the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Body {
    /// Its length (payloads and head trailers).
    Len(u64),
    /// A width byte above 64.
    Width,
    /// A head trailer's width byte at or past the archive's end.
    Truncated,
    /// A head width byte above 64.
    HeadWidth,
}

impl Body {
    /// From the walk's `bad` code and length (`fz_dec_walk`).
    pub fn from_walk(bad: u64, len: u64) -> Body {
        match bad {
            0 => Body::Len(len),
            1 => Body::Width,
            2 => Body::Truncated,
            _ => Body::HeadWidth,
        }
    }
}

/// The body length if the archive is exactly header, widths, body and chunk CRCs; else core's
/// error.
pub(crate) fn body_check(f: &Frame, body: Body) -> Result<usize, Error> {
    let b = match body {
        Body::Len(b) => b,
        Body::Width => return Err(Error::Corrupt("width above 64")),
        Body::Truncated => return Err(Error::Truncated),
        Body::HeadWidth => return Err(Error::Corrupt("head width above 64")),
    };
    if f.rest < f.sums {
        return Err(Error::Truncated);
    }
    let total = b.saturating_add(f.sums as u64);
    if total > f.rest as u64 {
        return Err(Error::Truncated);
    }
    if total < f.rest as u64 {
        return Err(Error::Corrupt("trailing bytes after the payload"));
    }
    Ok(b as usize)
}
