//! Choosing the embedded PTX variant for a device, the driver version a PTX module needs, and
//! a module's text cut at its kernels so that each is compiled alone, on first use
//! ([`KernelTexts`]). Pure functions: no GPU needed.

use crate::{Error, Result};
use std::collections::HashMap;
use std::ops::Range;

/// The newest variant whose architecture is at most the device's (PTX for sm_80 runs on sm_90;
/// PTX for sm_90 does not run on sm_80).
///
/// `variants`: (compute capability x 10, PTX text); `device_arch`: compute capability x 10.
pub fn select_variant<'a>(
    variants: &[(u32, &'a str)],
    device_arch: u32,
    device_name: &str,
) -> Result<(u32, &'a str)> {
    let oldest = variants
        .iter()
        .map(|v| v.0)
        .min()
        .ok_or_else(|| Error::NoPtx(String::new()))?;
    variants
        .iter()
        .filter(|(arch, _)| *arch <= device_arch)
        .max_by_key(|(arch, _)| *arch)
        .copied()
        .ok_or_else(|| Error::GpuTooOld {
            name: device_name.to_owned(),
            device_arch,
            oldest_arch: oldest,
        })
}

/// Every `.entry` of a PTX module with the sizes of its parameters in bytes, in order: a
/// `.param .u64 x` is 8 bytes, a `.param .align 8 .b8 x[40]` (a struct by value) 40.
///
/// # Example
/// ```
/// let ptx = ".visible .entry k(\n\t.param .align 8 .b8 k_param_0[40]\n)\n{\n}\n.visible .entry j(\n\t.param .u64 j_param_0,\n\t.param .u32 j_param_1\n)\n";
/// let entries = gpu_primitives_runtime::ptx::entry_param_bytes(ptx);
/// assert_eq!(entries["k"], [40]);
/// assert_eq!(entries["j"], [8, 4]);
/// ```
pub fn entry_param_bytes(ptx: &str) -> std::collections::HashMap<String, Vec<usize>> {
    let mut entries = std::collections::HashMap::new();
    let mut rest = ptx;
    while let Some(at) = rest.find(".entry ") {
        rest = &rest[at + ".entry ".len()..];
        let Some(open) = rest.find('(') else { break };
        let name = rest[..open].trim().to_owned();
        let close = rest[open..].find(')').map_or(rest.len(), |c| open + c);
        let params = rest[open + 1..close]
            .split(',')
            .map(str::trim)
            .filter(|p| p.starts_with(".param"))
            .map(param_bytes)
            .collect();
        entries.insert(name, params);
        rest = &rest[close..];
    }
    entries
}

/// Bytes of one `.param` declaration: its type's size (`.u64`, `.b8`, ...) times the array
/// length, if any.
fn param_bytes(decl: &str) -> usize {
    let bits = decl
        .split_whitespace()
        .filter_map(|w| w.strip_prefix('.'))
        .find(|w| matches!(w.as_bytes().first(), Some(b'u' | b's' | b'b' | b'f')))
        .and_then(|w| w[1..].parse::<usize>().ok())
        .unwrap_or(0);
    let count = match (decl.rfind('['), decl.rfind(']')) {
        (Some(open), Some(close)) if open < close => decl[open + 1..close].trim().parse().unwrap_or(0),
        _ => 1,
    };
    count * bits / 8
}

/// A PTX module's text cut at its kernels: every `.entry` (its whole text, from its
/// `.visible .entry name(` line to its closing brace) and the text around them, which every
/// kernel may need (the header, shared and global declarations, `.func` declarations and
/// bodies). [`KernelTexts::module_of`] gives the module less every other entry: a module of one
/// kernel, which the driver compiles in a fraction of the time the whole module takes (a
/// library's module of about 700 kernels took about 100 s to JIT at once on an H100).
///
/// Nothing is reordered, so each kernel sees every declaration before it as in the whole
/// module; an entry cannot call or name another entry (PTX: entries are not functions), so
/// none is lost by leaving the others out.
///
/// # Example
/// ```
/// use gpu_primitives_runtime::ptx::KernelTexts;
/// let ptx = ".version 7.8\n.target sm_90\n.visible .entry a(\n)\n{\n\t{ ret; }\n}\n.global .u32 g;\n.visible .entry b(\n)\n{\n\tret;\n}\n";
/// let texts = KernelTexts::new(ptx);
/// assert_eq!(texts.names().count(), 2);
/// assert_eq!(
///     texts.module_of("b").unwrap(),
///     ".version 7.8\n.target sm_90\n.global .u32 g;\n.visible .entry b(\n)\n{\n\tret;\n}\n"
/// );
/// assert!(texts.module_of("c").is_none());
/// ```
pub struct KernelTexts<'a> {
    text: &'a str,
    /// The text in order, cut into pieces: each whether it is an entry (else text every kernel
    /// keeps), and its bytes.
    pieces: Vec<(bool, Range<usize>)>,
    /// Each entry's index in `pieces`.
    entries: HashMap<&'a str, usize>,
}

impl<'a> KernelTexts<'a> {
    /// Cut `ptx` at its entries. An entry's text ends where the braces opened after its name
    /// close (braces in `//` comments not counted); an entry left unclosed runs to the end.
    pub fn new(ptx: &'a str) -> Self {
        let mut pieces = Vec::new();
        let mut entries = HashMap::new();
        let mut kept_from = 0;
        let mut at = 0;
        while at < ptx.len() {
            let line_end = ptx[at..].find('\n').map_or(ptx.len(), |n| at + n + 1);
            let Some(name) = entry_name(&ptx[at..line_end]) else {
                at = line_end;
                continue;
            };
            let end = closing_brace_line_end(ptx, at);
            if kept_from < at {
                pieces.push((false, kept_from..at));
            }
            entries.insert(name, pieces.len());
            pieces.push((true, at..end));
            kept_from = end;
            at = end;
        }
        if kept_from < ptx.len() {
            pieces.push((false, kept_from..ptx.len()));
        }
        Self {
            text: ptx,
            pieces,
            entries,
        }
    }

    /// The entries' names, in no particular order.
    pub fn names(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.entries.keys().copied()
    }

    /// The text of entry `name` alone, from its `.entry` line to its closing brace.
    pub fn entry(&self, name: &str) -> Option<&'a str> {
        let index = *self.entries.get(name)?;
        Some(&self.text[self.pieces[index].1.clone()])
    }

    /// The module with entry `name` and none of the others; `None` if there is no such entry.
    pub fn module_of(&self, name: &str) -> Option<String> {
        let index = *self.entries.get(name)?;
        let pieces = || {
            self.pieces
                .iter()
                .enumerate()
                .filter(move |(i, (entry, _))| !entry || *i == index)
        };
        let mut module = String::with_capacity(pieces().map(|(_, (_, r))| r.len()).sum());
        for (_, (_, range)) in pieces() {
            module.push_str(&self.text[range.clone()]);
        }
        Some(module)
    }
}

/// The kernel's name where `line` opens an entry (`.entry name(`, after `.visible` or `.weak`
/// if any).
fn entry_name(line: &str) -> Option<&str> {
    let mut words = line.trim_start();
    for linkage in [".visible ", ".weak "] {
        words = words.strip_prefix(linkage).map_or(words, str::trim_start);
    }
    let rest = words.strip_prefix(".entry")?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let name = rest[..rest.find('(').unwrap_or(rest.len())].trim();
    (!name.is_empty()).then_some(name)
}

/// The end (after its newline) of the line where the braces first opened at or after `from`
/// close again; the text's end if they never do.
fn closing_brace_line_end(ptx: &str, from: usize) -> usize {
    let mut depth = 0usize;
    let mut opened = false;
    let mut at = from;
    while at < ptx.len() {
        let line_end = ptx[at..].find('\n').map_or(ptx.len(), |n| at + n + 1);
        let line = &ptx[at..line_end];
        let code = line.find("//").map_or(line, |c| &line[..c]);
        for c in code.chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        at = line_end;
        if opened && depth == 0 {
            return line_end;
        }
    }
    ptx.len()
}

/// The `.version major.minor` line of a PTX module.
pub fn ptx_isa_version(ptx: &str) -> Option<(u32, u32)> {
    let line = ptx.lines().find_map(|l| l.trim().strip_prefix(".version"))?;
    let (major, minor) = line.trim().split_once('.')?;
    Some((major.trim().parse().ok()?, minor.trim().parse().ok()?))
}

/// The oldest CUDA version (as the driver API encodes it: 1000 * major + 10 * minor) whose
/// driver loads PTX of ISA `major.minor`: ISA 7.x came with CUDA 11.x, 8.x with 12.x, 9.x with
/// 13.x; ISA 6.x with CUDA 9.0 to 10.2.
pub fn cuda_version_for_ptx_isa((major, minor): (u32, u32)) -> u32 {
    match major {
        0..=5 => 8000,
        6 => match minor {
            0..=2 => 9000 + 10 * minor,
            3 => 10000,
            4 => 10010,
            _ => 10020,
        },
        m => 1000 * (m + 4) + 10 * minor,
    }
}

/// "12.4" from 12040.
pub fn format_cuda_version(v: u32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const V: &[(u32, &str)] = &[(80, "a"), (90, "b")];

    #[test]
    fn picks_newest_fitting_variant() {
        assert_eq!(select_variant(V, 90, "H100").unwrap().0, 90);
        assert_eq!(select_variant(V, 89, "L4").unwrap().0, 80);
        assert_eq!(select_variant(V, 120, "next").unwrap().0, 90);
        let err = select_variant(V, 75, "T4").unwrap_err().to_string();
        assert!(err.contains("sm_75") && err.contains("sm_80"), "{err}");
        assert!(matches!(select_variant(&[], 90, "x"), Err(Error::NoPtx(_))));
    }

    #[test]
    fn kernel_texts_keep_everything_but_the_other_entries() {
        let ptx = "//\n.version 7.8\n.target sm_90\n.shared .b8 S[4];\n.func f\n()\n;\n\t// .globl\ta\n\
                   .visible .entry a(\n\t.param .u64 a_param_0\n)\n.maxntid 32, 1, 1\n{\n\t{ .reg .b32 r; // }\n\t}\n\tret;\n}\n\n\
                   .global .align 4 .b8 table[4] = {1, 2, 3, 4};\n.entry b()\n{\n\tret;\n}\n\
                   .func f()\n{\n\ttrap;\n}\n";
        let texts = KernelTexts::new(ptx);
        let mut names: Vec<_> = texts.names().collect();
        names.sort_unstable();
        assert_eq!(names, ["a", "b"]);
        let a = texts.entry("a").unwrap();
        assert!(
            a.starts_with(".visible .entry a(") && a.ends_with("\tret;\n}\n"),
            "{a:?}"
        );
        assert_eq!(texts.entry("b").unwrap(), ".entry b()\n{\n\tret;\n}\n");
        // Each module is the text less the other entry, in the original order.
        assert_eq!(
            texts.module_of("a").unwrap(),
            ptx.replace(texts.entry("b").unwrap(), "")
        );
        assert_eq!(texts.module_of("b").unwrap(), ptx.replace(a, ""));
        assert!(texts.module_of("f").is_none());
        // Not entries: a `.func`, a name that only starts with "entry", a comment.
        assert_eq!(entry_name(".func f()"), None);
        assert_eq!(entry_name(".entryx k("), None);
        assert_eq!(entry_name("// .entry k("), None);
        assert_eq!(entry_name(".weak .entry k ("), Some("k"));
    }

    #[test]
    fn reads_isa_and_maps_to_cuda() {
        let ptx = "//\n// Generated by LLVM\n.version 7.8\n.target sm_90\n";
        assert_eq!(ptx_isa_version(ptx), Some((7, 8)));
        assert_eq!(cuda_version_for_ptx_isa((7, 8)), 11080);
        assert_eq!(cuda_version_for_ptx_isa((7, 0)), 11000);
        assert_eq!(cuda_version_for_ptx_isa((8, 5)), 12050);
        assert_eq!(cuda_version_for_ptx_isa((9, 0)), 13000);
        assert_eq!(format_cuda_version(12040), "12.4");
        assert_eq!(ptx_isa_version("no header"), None);
    }

    proptest! {
        #[test]
        fn selected_variant_never_exceeds_device(device in 50u32..130, archs in proptest::collection::btree_set(50u32..130, 1..5)) {
            let variants: Vec<(u32, &str)> = archs.iter().map(|&a| (a, "")).collect();
            match select_variant(&variants, device, "gpu") {
                Ok((arch, _)) => {
                    prop_assert!(arch <= device);
                    prop_assert!(archs.iter().all(|&a| a <= arch || a > device));
                }
                Err(Error::GpuTooOld { oldest_arch, .. }) => prop_assert!(oldest_arch > device),
                Err(e) => prop_assert!(false, "unexpected error {e}"),
            }
        }

        #[test]
        fn newer_isa_never_needs_older_cuda(a in (6u32..10, 0u32..9), b in (6u32..10, 0u32..9)) {
            if a <= b {
                prop_assert!(cuda_version_for_ptx_isa(a) <= cuda_version_for_ptx_isa(b));
            }
        }
    }
}
