//! Writing the CLI's output files atomically: each is written to a new temporary file in the
//! target's folder, flushed to the disk, then renamed over the target, so that a failure (or a
//! crash) leaves the target as it was, never half written.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// Write `path` through `write`, which is given a new, empty temporary file's path in the same
/// folder and writes the whole content there; then the file is flushed to the disk and renamed
/// over `path` (over the file a symbolic link at `path` points to). On any error the temporary
/// file is removed and `path` is left as it was.
///
/// # Errors
/// `write`'s errors and the file system's.
pub fn replace_atomically(path: &Path, write: impl FnOnce(&Path) -> io::Result<()>) -> io::Result<()> {
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let folder = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    let name = target
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
    // A name no other writer holds: created here, exclusively.
    let temporary = (0u32..)
        .map(|attempt| {
            // `.<pid>.<attempt>.<name>`: hidden, and the name's extension last (a writer may
            // choose its format by it, as plotters does).
            let mut temporary = std::ffi::OsString::from(format!(".{}.{attempt}.", std::process::id()));
            temporary.push(name);
            let temporary = folder.join(temporary);
            let created = File::options().write(true).create_new(true).open(&temporary);
            (temporary, created)
        })
        .find(|(_, created)| !matches!(created, Err(e) if e.kind() == io::ErrorKind::AlreadyExists))
        .unwrap_or_else(|| unreachable!("an unbounded range"));
    let temporary = match temporary {
        (temporary, Ok(_)) => temporary,
        (_, Err(e)) => return Err(e),
    };
    let written = write(&temporary)
        .and_then(|()| File::options().write(true).open(&temporary)?.sync_all())
        .and_then(|()| std::fs::rename(&temporary, &target));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("gpu-primitives-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_complete_write_replaces_the_file() {
        let dir = folder("complete");
        let path = dir.join("out.csv");
        std::fs::write(&path, "old").unwrap();
        replace_atomically(&path, |t| std::fs::write(t, "new")).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "a temporary file was left"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_failed_write_leaves_the_file_and_no_temporary() {
        let dir = folder("failed");
        let path = dir.join("out.json");
        std::fs::write(&path, "old").unwrap();
        let failed = replace_atomically(&path, |t| {
            std::fs::write(t, "half")?;
            Err(io::Error::other("the writer failed midway"))
        });
        assert!(failed.is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "a temporary file was left"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_new_file_is_created() {
        let dir = folder("new");
        let path = dir.join("plot.png");
        replace_atomically(&path, |t| std::fs::write(t, [1u8, 2, 3])).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), [1, 2, 3]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
