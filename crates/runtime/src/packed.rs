//! Kernels stored compressed: for each architecture, one zstd frame per family of kernels, with
//! an index of each family's kernels, so that a program decompresses only the families it
//! launches (a family of the library: 0.4 to 115 KB compressed, up to 1.5 MB of PTX). A
//! maintainer's tool writes the frames and the index (the library's: `cargo xtask ptx`); a
//! [`Gpu::packed_module`](crate::Gpu::packed_module) loads them.

use crate::{Error, Result};
use std::io::Read;

/// One family of kernels: their names, and a PTX module holding them (and every non-entry piece
/// of the module it was cut from) as one zstd frame.
#[derive(Debug, Clone, Copy)]
pub struct PackedFamily {
    /// The family's name (`device_reduce`).
    pub name: &'static str,
    /// Its kernels: the entries of the module in the frame.
    pub kernels: &'static [&'static str],
    /// The module's PTX text, compressed as one zstd frame.
    pub frame: &'static [u8],
}

/// The kernels of one architecture as families of compressed PTX.
#[derive(Debug, Clone, Copy)]
pub struct PackedModule {
    /// The architecture the PTX was built for (compute capability x 10).
    pub arch: u32,
    /// The PTX ISA version of every family's module (`.version`), as (major, minor): checked
    /// against the driver before anything is decompressed.
    pub ptx_isa: (u32, u32),
    /// The families.
    pub families: &'static [PackedFamily],
}

impl PackedFamily {
    /// The family's PTX text (zstd, decoded in Rust: about 15 ms for the library's largest
    /// family, 1.5 MB, on the build machine).
    ///
    /// # Errors
    /// [`Error::BadFrame`] when the frame is not a zstd frame of UTF-8 text.
    pub fn decompress(&self) -> Result<String> {
        let bad = |reason: String| Error::BadFrame {
            family: self.name.to_owned(),
            reason,
        };
        let mut decoder =
            ruzstd::decoding::StreamingDecoder::new(self.frame).map_err(|e| bad(e.to_string()))?;
        let mut text = String::new();
        decoder
            .read_to_string(&mut text)
            .map_err(|e| bad(e.to_string()))?;
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `zstd -19` of ".version 8.0\n" (13 bytes).
    const FRAME: &[u8] = &[
        0x28, 0xb5, 0x2f, 0xfd, 0x04, 0x68, 0x69, 0x00, 0x00, 0x2e, 0x76, 0x65, 0x72, 0x73, 0x69, 0x6f, 0x6e,
        0x20, 0x38, 0x2e, 0x30, 0x0a, 0xb3, 0x6f, 0x31, 0x7c,
    ];

    #[test]
    fn a_frame_decompresses_to_its_text() {
        let family = PackedFamily {
            name: "f",
            kernels: &[],
            frame: FRAME,
        };
        assert_eq!(family.decompress().unwrap(), ".version 8.0\n");
    }

    #[test]
    fn a_damaged_frame_is_an_error_naming_its_family() {
        let family = PackedFamily {
            name: "device_reduce",
            kernels: &[],
            frame: &FRAME[..10],
        };
        match family.decompress() {
            Err(Error::BadFrame { family, .. }) => assert_eq!(family, "device_reduce"),
            other => panic!("expected BadFrame, got {other:?}"),
        }
        let not_zstd = PackedFamily {
            name: "x",
            kernels: &[],
            frame: b".version 8.0\n",
        };
        assert!(matches!(not_zstd.decompress(), Err(Error::BadFrame { .. })));
    }
}
