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

/// Text that reaches the process's environment from Rust code.
const ENVIRONMENT: &[&str] = &["std::env", "env::var", "env::set_var", "env::remove_var", "env!("];

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

/// Each line of code (comments left out) in `files` that names one of `needles`.
fn lines_naming(files: &[PathBuf], needles: &[&str]) -> Vec<String> {
    let mut hits = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for (number, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            if needles.iter().any(|needle| code.contains(needle)) {
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
    let hits = lines_naming(&files, ENVIRONMENT);
    assert!(
        hits.is_empty(),
        "the library crates read the environment (a program should, and pass what it found):\n{}",
        hits.join("\n")
    );
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
    let hits = lines_naming(std::slice::from_ref(&file), ENVIRONMENT);
    std::fs::remove_dir_all(&dir).expect("the temporary directory removed");
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert!(hits[0].ends_with(":3: std::env::var(\"PORT\").ok()"), "{hits:?}");
}
