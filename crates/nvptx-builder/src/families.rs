//! Cutting one PTX module into modules of a family of kernels each, numbered per family, so that
//! a change to one family's sources changes only that family's text (docs/toolchain.md, "How the
//! kernels are stored").
//!
//! LLVM numbers branch labels (`$L__BB<function>_<block>`) and `callseq` comments across the
//! whole module, and names anonymous constants with a hash of the module: in one module, adding a
//! kernel renumbers every later one. Each family's module here keeps every piece of the module
//! that is not an entry or a function (the head, the globals), the functions (`.func`
//! declarations and bodies) its entries reach through the functions they name, and its own
//! entries, in their order; its labels and `callseq` numbers are renumbered from 0 and the
//! module hash is dropped from constants' names. Labels are local to the function that declares
//! them, so the renumbering changes no meaning. A function no entry of a family names stays out
//! of that family's module: a large function rustc left out of line (a `u8` kernel's rounds)
//! then weighs on its own family only.

/// One family's module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Family {
    /// The family's name, as the caller's rule gave it.
    pub name: String,
    /// Its kernels (entries), in the order of the module.
    pub kernels: Vec<String>,
    /// A PTX module of those kernels, the functions they reach and every other piece of the
    /// original module that is neither an entry nor a function.
    pub text: String,
}

/// A piece of the module: an entry (its name) with the comment and blank lines before it, a
/// function's declaration or body (its name), or text every family keeps.
enum Piece<'a> {
    Entry(&'a str, &'a str),
    Function(&'a str, &'a str),
    Kept(&'a str),
}

/// Cut `ptx` into one module per family, `family(kernel)` naming each entry's, in the order of
/// each family's first entry.
///
/// # Example
/// ```
/// let ptx = ".version 8.0\n.target sm_90\n\n\t// .globl\ta_u32\n.visible .entry a_u32(\n)\n{\n$L__BB0_1:\n\tret;\n}\n\t// .globl\tb_f32\n.visible .entry b_f32(\n)\n{\n$L__BB1_1:\n\tret;\n}\n";
/// let families = nvptx_builder::families::split(ptx, |k| k[..1].to_string());
/// assert_eq!(families.len(), 2);
/// assert_eq!(families[1].kernels, ["b_f32"]);
/// assert_eq!(
///     families[1].text,
///     ".version 8.0\n.target sm_90\n\n\t// .globl\tb_f32\n.visible .entry b_f32(\n)\n{\n$L__BB0_1:\n\tret;\n}\n"
/// );
/// ```
pub fn split(ptx: &str, family: impl Fn(&str) -> String) -> Vec<Family> {
    let pieces = pieces(ptx);
    let mut families: Vec<Family> = Vec::new();
    for piece in &pieces {
        if let Piece::Entry(name, _) = piece {
            let f = family(name);
            match families.iter_mut().find(|x| x.name == f) {
                Some(x) => x.kernels.push((*name).to_owned()),
                None => families.push(Family {
                    name: f,
                    kernels: vec![(*name).to_owned()],
                    text: String::new(),
                }),
            }
        }
    }
    for f in &mut families {
        let reached = reached_functions(&pieces, &f.kernels);
        let mut text = String::new();
        for piece in &pieces {
            match piece {
                Piece::Kept(t) => text.push_str(t),
                Piece::Entry(name, t) if f.kernels.iter().any(|k| k == name) => text.push_str(t),
                Piece::Function(name, t) if reached.contains(name) => text.push_str(t),
                Piece::Entry(..) | Piece::Function(..) => {}
            }
        }
        f.text = renumber(&text);
    }
    families
}

/// The functions of a PTX module: each `.func` declaration and body apart, as (its name, its
/// text with the comment lines before it), in the module's order.
pub fn functions(ptx: &str) -> Vec<(&str, &str)> {
    function_pieces(&pieces(ptx))
}

/// The [`Piece::Function`]s of `pieces`, as (name, text).
fn function_pieces<'a>(pieces: &[Piece<'a>]) -> Vec<(&'a str, &'a str)> {
    pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Function(name, text) => Some((*name, *text)),
            _ => None,
        })
        .collect()
}

/// The functions the entries `kernels` or the kept text (a global's initializer) name, and
/// those the named ones name, transitively.
fn reached_functions<'a>(pieces: &[Piece<'a>], kernels: &[String]) -> Vec<&'a str> {
    let functions = function_pieces(pieces);
    let mut reached: Vec<&str> = Vec::new();
    let mut to_read: Vec<&str> = pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Entry(name, text) if kernels.iter().any(|k| k == name) => Some(*text),
            Piece::Kept(text) => Some(*text),
            _ => None,
        })
        .collect();
    while let Some(text) = to_read.pop() {
        for &(name, _) in &functions {
            if !reached.contains(&name) && names(text, name) {
                reached.push(name);
                // Every declaration and body of the function, for the functions it names.
                to_read.extend(functions.iter().filter(|(n, _)| *n == name).map(|&(_, t)| t));
            }
        }
    }
    reached
}

/// Whether `text` holds `name` as a whole identifier (not inside a longer one, such as a
/// parameter's `<name>_param_0`).
fn names(text: &str, name: &str) -> bool {
    let identifier = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '.';
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        !before.is_some_and(identifier) && !after.is_some_and(identifier)
    })
}

/// The module cut into pieces that join back into it: every entry with the `// .globl` line
/// right before it, every function's declaration and body, and the text between.
fn pieces(ptx: &str) -> Vec<Piece<'_>> {
    let mut pieces = Vec::new();
    let mut kept_from = 0;
    let mut at = 0;
    while at < ptx.len() {
        let line_end = ptx[at..].find('\n').map_or(ptx.len(), |n| at + n + 1);
        let line = &ptx[at..line_end];
        let (name, entry) = match (entry_name(line), function_name(line)) {
            (Some(name), _) => (name, true),
            (None, Some(name)) => (name, false),
            (None, None) => {
                at = line_end;
                continue;
            }
        };
        let start = leading_comments(ptx, kept_from, at);
        let end = if entry {
            closing_brace_line_end(ptx, at)
        } else {
            function_end(ptx, at)
        };
        if kept_from < start {
            pieces.push(Piece::Kept(&ptx[kept_from..start]));
        }
        let text = &ptx[start..end];
        pieces.push(if entry {
            Piece::Entry(name, text)
        } else {
            Piece::Function(name, text)
        });
        kept_from = end;
        at = end;
    }
    if kept_from < ptx.len() {
        pieces.push(Piece::Kept(&ptx[kept_from..]));
    }
    pieces
}

/// Where the run of `// .globl` lines ending at `at` begins (not before `from`).
fn leading_comments(ptx: &str, from: usize, at: usize) -> usize {
    let mut start = at;
    while start > from {
        let line_start = ptx[from..start - 1].rfind('\n').map_or(from, |n| from + n + 1);
        let line = ptx[line_start..start].trim();
        if line.starts_with("// .globl") {
            start = line_start;
        } else {
            break;
        }
    }
    start
}

/// `line` from its first word after `.visible` or `.weak`.
fn after_linkage(line: &str) -> &str {
    let mut words = line.trim_start();
    for linkage in [".visible ", ".weak "] {
        words = words.strip_prefix(linkage).map_or(words, str::trim_start);
    }
    words
}

/// The kernel's name where `line` opens an entry (`.entry name(`, after its linkage).
fn entry_name(line: &str) -> Option<&str> {
    let rest = after_linkage(line).strip_prefix(".entry ")?.trim_start();
    let end = rest
        .find(|c: char| c == '(' || c.is_whitespace())
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// The function's name where `line` opens a `.func` declaration or body (after its linkage or
/// `.extern`, and the return parameters' parentheses where it has any).
fn function_name(line: &str) -> Option<&str> {
    let words = after_linkage(line);
    let words = words.strip_prefix(".extern ").map_or(words, str::trim_start);
    let mut rest = words.strip_prefix(".func")?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    rest = rest.trim_start();
    if rest.starts_with('(') {
        rest = rest[rest.find(')')? + 1..].trim_start();
    }
    let end = rest
        .find(|c: char| c == '(' || c == ';' || c.is_whitespace())
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// The end of the function opened at `from`: its body's closing brace line, or, for a
/// declaration (a `;` before any `{`), the line of the `;`.
fn function_end(ptx: &str, from: usize) -> usize {
    let mut at = from;
    while at < ptx.len() {
        let line_end = ptx[at..].find('\n').map_or(ptx.len(), |n| at + n + 1);
        let code = ptx[at..line_end].split("//").next().unwrap_or("");
        match (code.find('{'), code.find(';')) {
            (Some(brace), Some(semicolon)) if semicolon < brace => return line_end,
            (Some(_), _) => return closing_brace_line_end(ptx, from),
            (None, Some(_)) => return line_end,
            (None, None) => at = line_end,
        }
    }
    ptx.len()
}

/// The end of the line where the braces opened after `from` close (braces in `//` comments not
/// counted), or the end of the text.
fn closing_brace_line_end(ptx: &str, from: usize) -> usize {
    let mut depth = 0i64;
    let mut opened = false;
    let mut at = from;
    while at < ptx.len() {
        let line_end = ptx[at..].find('\n').map_or(ptx.len(), |n| at + n + 1);
        let code = ptx[at..line_end].split("//").next().unwrap_or("");
        for c in code.chars() {
            match c {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth -= 1,
                _ => {}
            }
        }
        at = line_end;
        if opened && depth <= 0 {
            return at;
        }
    }
    ptx.len()
}

/// `text` with its labels' function numbers and its `callseq` numbers counted from 0 in order of
/// appearance, and the module hash taken out of anonymous constants' names
/// (`anon_$_<hash>_$_<n>` becomes `anon_$_<n>`).
fn renumber(text: &str) -> String {
    let mut functions: Vec<String> = Vec::new();
    let mut calls: Vec<(String, usize)> = Vec::new();
    let mut next_call = 0usize;
    let mut out = String::with_capacity(text.len());
    const LABEL: &str = "$L__BB";
    const CALLSEQ: &str = "callseq ";
    const ANON: &str = "anon_$_";
    const PATTERNS: [&str; 3] = [LABEL, CALLSEQ, ANON];
    // Where each pattern next occurs at or after `done` (searched again only once passed, so
    // the text is read once per pattern).
    let find = |from: usize, pattern: &str| text[from..].find(pattern).map_or(usize::MAX, |at| from + at);
    let mut next = PATTERNS.map(|p| find(0, p));
    let mut done = 0;
    loop {
        let (which, &at) = next
            .iter()
            .enumerate()
            .min_by_key(|&(_, at)| *at)
            .expect("three patterns");
        if at == usize::MAX {
            out.push_str(&text[done..]);
            return out;
        }
        let pattern = PATTERNS[which];
        out.push_str(&text[done..at + pattern.len()]);
        let mut rest = &text[at + pattern.len()..];
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        match pattern {
            LABEL if digits > 0 && rest[digits..].starts_with('_') => {
                let number = &rest[..digits];
                let index = match functions.iter().position(|f| f == number) {
                    Some(i) => i,
                    None => {
                        functions.push(number.to_owned());
                        functions.len() - 1
                    }
                };
                out.push_str(&index.to_string());
                rest = &rest[digits..];
            }
            CALLSEQ if digits > 0 => {
                let number = &rest[..digits];
                let opening = rest[digits..].starts_with(", 0");
                let found = calls.iter().rev().find(|(n, _)| n == number).map(|&(_, i)| i);
                let index = match (opening, found) {
                    (false, Some(i)) => i,
                    _ => {
                        next_call += 1;
                        calls.push((number.to_owned(), next_call - 1));
                        next_call - 1
                    }
                };
                out.push_str(&index.to_string());
                rest = &rest[digits..];
            }
            ANON => {
                // `<hex>_$_`: the module hash, dropped.
                let hex = rest.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(rest.len());
                if hex > 0 && rest[hex..].starts_with("_$_") {
                    rest = &rest[hex + "_$_".len()..];
                }
            }
            _ => {}
        }
        done = text.len() - rest.len();
        for (i, p) in PATTERNS.iter().enumerate() {
            if next[i] < done {
                next[i] = find(done, p);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE: &str = "//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version 8.0\n.target sm_90\n.address_size 64\n\n.global .align 4 .b8 anon_$_9f3e_$_0[4];\n.func panic()\n;\n\n\t// .globl\tx_u32_a\n.visible .entry x_u32_a(\n\t.param .u64 p\n)\n{\n\t// callseq 0, 0\n\tcall panic;\n\t// callseq 0\n$L__BB0_1:\n\tbra.uni $L__BB0_1;\n}\n\t// .globl\ty_f32\n.visible .entry y_f32(\n)\n{\n\tld.global.u32 %r1, [anon_$_9f3e_$_0];\n\t// callseq 1, 0\n\tcall panic;\n\t// callseq 1\n$L__BB1_2:\n\tret;\n}\n\t// .globl\tx_u64_b\n.visible .entry x_u64_b(\n)\n{\n$L__BB2_7:\n\tret;\n}\n.func panic()\n{\n$L__BB3_1:\n\tret;\n}\n";

    fn family(kernel: &str) -> String {
        kernel.split('_').next().unwrap().to_owned()
    }

    #[test]
    fn families_keep_the_shared_pieces_and_their_own_entries() {
        let families = split(MODULE, family);
        let names: Vec<_> = families
            .iter()
            .map(|f| (f.name.as_str(), f.kernels.clone()))
            .collect();
        assert_eq!(
            names,
            [
                ("x", vec!["x_u32_a".to_owned(), "x_u64_b".to_owned()]),
                ("y", vec!["y_f32".to_owned()])
            ]
        );
        let x = &families[0].text;
        assert!(x.starts_with("//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version 8.0\n"));
        assert!(x.contains(".visible .entry x_u32_a(") && x.contains(".visible .entry x_u64_b("));
        assert!(
            !x.contains("y_f32"),
            "another family's entry or its .globl comment: {x}"
        );
        assert!(x.ends_with(".func panic()\n{\n$L__BB2_1:\n\tret;\n}\n"), "{x}");
        // x_u64_b was function 2 of the module; it is 1 of its family.
        assert!(x.contains("$L__BB1_7:") && !x.contains("$L__BB2_7"));
    }

    #[test]
    fn numbers_and_hashes_do_not_depend_on_other_families() {
        let y = &split(MODULE, family)[1].text;
        assert!(y.contains("$L__BB0_2:"), "{y}");
        assert!(
            y.contains("// callseq 0, 0\n\tcall panic;\n\t// callseq 0\n"),
            "{y}"
        );
        assert!(y.contains("[anon_$_0]") && y.contains(".b8 anon_$_0[4]"), "{y}");
        // Adding a kernel of family x before y leaves y's text as it was.
        let more = MODULE.replace(
            "\t// .globl\ty_f32",
            "\t// .globl\tx_i8\n.visible .entry x_i8(\n)\n{\n$L__BB9_1:\n\t// callseq 7, 0\n\t// callseq 7\n\tret;\n}\n\t// .globl\ty_f32",
        );
        let y_again = &split(&more, family)[1].text;
        assert_eq!(y, y_again);
    }

    #[test]
    fn a_function_goes_only_to_the_families_whose_entries_reach_it() {
        // x_a calls helper, which calls leaf; y_b calls neither; `helper_param_0` is not a
        // use of helper.
        let module = ".version 8.0\n.target sm_90\n\n.func  (.param .b32 func_retval0) helper(\n\t.param .b32 helper_param_0\n)\n;\n.func leaf\n()\n.noreturn;\n\t// .globl\tx_a\n.visible .entry x_a(\n)\n{\n\tcall.uni (retval0), helper, (param0);\n\tret;\n}\n\t// .globl\ty_b\n.visible .entry y_b(\n)\n{\n\tret;\n}\n.func  (.param .b32 func_retval0) helper(\n\t.param .b32 helper_param_0\n)\n{\n\tld.param.b32 %r1, [helper_param_0];\n\tcall.uni leaf, ();\n\tret;\n}\n.func leaf()\n{\n\tret;\n}\n.func unused()\n{\n\tret;\n}\n";
        let families = split(module, |k| k[..1].to_string());
        let (x, y) = (&families[0].text, &families[1].text);
        assert_eq!(x.matches(") helper(").count(), 2, "declaration and body: {x}");
        assert_eq!(x.matches(".func leaf").count(), 2, "reached through helper: {x}");
        assert!(!x.contains("unused") && !y.contains("unused"), "{x}{y}");
        assert_eq!(
            y,
            ".version 8.0\n.target sm_90\n\n\t// .globl\ty_b\n.visible .entry y_b(\n)\n{\n\tret;\n}\n"
        );
        // Joined back, x keeps the order of the module.
        assert!(x.find(") helper(").unwrap() < x.find(".entry x_a").unwrap());
        assert!(x.rfind(") helper(").unwrap() > x.find(".entry x_a").unwrap());
    }

    #[test]
    fn joined_families_hold_every_entry_once() {
        let families = split(MODULE, family);
        let total: usize = families.iter().map(|f| f.kernels.len()).sum();
        assert_eq!(total, 3);
        for f in &families {
            for k in &f.kernels {
                assert_eq!(f.text.matches(&format!(".entry {k}(")).count(), 1);
            }
        }
    }
}
