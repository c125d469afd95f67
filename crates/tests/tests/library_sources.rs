//! Checks of the library crates' sources that need no GPU: what a library may not do, whatever
//! compiles. Issue 68: the libraries read no environment variable; a program (the CLI, a test,
//! an example, a user's `main`) reads the environment and passes what it found (a tuning
//! policy, `TuningOverrides::from_vars`, `World::from_vars`).
//!
//! Run: `cargo test -p gpu-primitives-tests --test library_sources`.

use std::path::{Path, PathBuf};

/// The crates a user's program links (their `src/` only: their tests, examples and build
/// scripts are programs). nvptx-builder is a build script's library: reading cargo's variables
/// (`OUT_DIR`, `RUSTC`) is its job.
const LIBRARIES: &[&str] = &["abi", "runtime", "gpu-primitives", "distributed", "kernels"];

/// The code of a line: up to a `//` that is not inside a string literal.
fn code_of(line: &str) -> &str {
    let mut in_string = false;
    let mut escaped = false;
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            _ if escaped => escaped = false,
            b'\\' if in_string => escaped = true,
            b'"' => in_string = !in_string,
            b'/' if !in_string && bytes.get(i + 1) == Some(&b'/') => return &line[..i],
            _ => {}
        }
    }
    line
}

/// Whether `code` names the standard library's `env` module or macros: the word `env` as a
/// path segment (`std::env`, `env::var`, `use std::{env, fs}`) or a macro (`env!`,
/// `option_env!`).
fn reads_environment(code: &str) -> bool {
    let bytes = code.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    code.match_indices("env").any(|(at, _)| {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = code[at + 3..].trim_start().as_bytes().first().copied();
        let option_env = code[..at].ends_with("option_");
        (before.is_none_or(|b| !word(b)) || option_env) && matches!(after, Some(b':' | b'!' | b',' | b'}'))
    })
}

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// Each line of `files` whose code (comments left out) reads the environment.
fn lines_reading_the_environment(files: &[PathBuf]) -> Vec<String> {
    let mut hits = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for (number, line) in text.lines().enumerate() {
            if reads_environment(code_of(line)) {
                hits.push(format!("{}:{}: {}", file.display(), number + 1, line.trim()));
            }
        }
    }
    hits
}

#[test]
fn the_libraries_read_no_environment_variable() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for library in LIBRARIES {
        rust_files(&crates.join(library).join("src"), &mut files);
    }
    assert!(
        files.len() > 50,
        "found only {} source files under {}",
        files.len(),
        crates.display()
    );
    let hits = lines_reading_the_environment(&files);
    assert!(
        hits.is_empty(),
        "the library crates read the environment (a program should, and pass what it found):\n{}",
        hits.join("\n")
    );
}

#[test]
fn the_check_tells_reads_of_the_environment_from_other_text() {
    for code in [
        "std::env::var(\"PORT\")",
        "let u = \"https://h\"; std::env::var(\"P\")",
        "use std::{env, fs};",
        "use std::{fs, env};",
        "env::args()",
        "let v = env!(\"CARGO_PKG_VERSION\");",
        "option_env!(\"X\")",
    ] {
        assert!(reads_environment(code_of(code)), "{code}");
    }
    for code in [
        "// std::env::var in a comment",
        "let environment = 1; let env = 2; f(env);",
        "fn from_vars(var: impl Fn(&str) -> Option<String>)",
        "\"a string naming std::env\" // and a comment with env::var",
        "self.env_count",
    ] {
        assert!(!reads_environment(code_of(code)), "{code}");
    }
}

#[test]
fn the_check_finds_a_read_of_the_environment() {
    let dir = std::env::temp_dir().join(format!("gpu-primitives-sources-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let file = dir.join("lib.rs");
    std::fs::write(
        &file,
        "// std::env::var in a comment is not code\nfn port() -> Option<String> {\n    std::env::var(\"PORT\").ok()\n}\n",
    )
    .expect("a temporary file");
    let hits = lines_reading_the_environment(std::slice::from_ref(&file));
    std::fs::remove_dir_all(&dir).expect("the temporary directory removed");
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert!(hits[0].ends_with(":3: std::env::var(\"PORT\").ok()"), "{hits:?}");
}
