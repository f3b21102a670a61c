//! Claiming an output file before touching it ([`OutputClaim`]), and the room left to
//! grow it ([`Room`]), checked before every write.

use anyhow::{Context, Result};
use hdf5::File;
use std::fs::{File as OsFile, OpenOptions, TryLockError};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The first bytes of an HDF5 file (without a user block, as xnet and h5py write them).
const HDF5_SIGNATURE: &[u8; 8] = b"\x89HDF\r\n\x1a\n";

/// The first bytes of `file`, as many as the HDF5 signature has (fewer if it is shorter).
fn first_bytes(file: &mut OsFile) -> std::io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(HDF5_SIGNATURE.len());
    file.take(HDF5_SIGNATURE.len() as u64).read_to_end(&mut head)?;
    Ok(head)
}

/// Whether a file starting with `head` is one xnet may replace: empty, or HDF5.
fn is_hdf5_or_empty(head: &[u8]) -> bool {
    head.is_empty() || head == HDF5_SIGNATURE
}

/// What every write leaves free: room for the final status and the metadata HDF5 writes
/// when the file is flushed and closed.
const RESERVE: u64 = 1 << 20;

/// The room left to grow one output file.
#[derive(Clone)]
pub struct Room {
    pub(super) path: PathBuf,
}

impl Room {
    /// The room of the file at `path`.
    pub fn new(path: &Path) -> Self {
        Self { path: path.to_path_buf() }
    }

    /// Bytes the file may still grow by, and what limits it: the free space of its file
    /// system (for this user), or the file-size limit (`ulimit -f`) less its size.
    fn left(&self) -> Option<(u64, &'static str)> {
        let mut limits: Vec<(u64, &'static str)> = Vec::new();
        let dir = self.path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()) {
            // SAFETY: `c` is a valid C string and statvfs only fills `st`.
            let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
            if unsafe { libc::statvfs(c.as_ptr(), &mut st) } == 0 {
                limits.push((st.f_bavail as u64 * st.f_frsize as u64, "free space on its file system"));
            }
        }
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit writes into the struct it is given.
        if unsafe { libc::getrlimit(libc::RLIMIT_FSIZE, &mut limit) } == 0
            && limit.rlim_cur != libc::RLIM_INFINITY
        {
            let size = std::fs::metadata(&self.path).map_or(0, |m| m.len());
            limits.push((limit.rlim_cur.saturating_sub(size), "room under the file-size limit (ulimit -f)"));
        }
        limits.into_iter().min_by_key(|l| l.0)
    }

    /// Fails, saying why, unless `bytes` more can be written and the reserve still kept.
    pub fn check(&self, bytes: u64) -> Result<()> {
        match self.left() {
            Some((left, what)) if left < bytes + RESERVE => anyhow::bail!(
                "the file cannot grow: {} left ({what}), and this write needs {} besides the {} \
                 kept free to close the file cleanly; the results written so far are kept",
                models::memory::human(left),
                models::memory::human(bytes),
                models::memory::human(RESERVE)
            ),
            _ => Ok(()),
        }
    }
}

/// An output file held for this process: an exclusive lock on the file itself, taken
/// before anything truncates it and kept until the claim is dropped. A second run (or a
/// program reading the file with HDF5's own locking) cannot then truncate or replace it.
///
/// The lock is `flock`, which HDF5 also uses: files are therefore created with HDF5's
/// own locking off, the claim standing in for it. On NFS the kernel maps `flock` to
/// POSIX locks, so the claim holds across nodes too.
pub struct OutputClaim {
    path: PathBuf,
    lock: OsFile,
    /// The claim made the file, and nothing has been written to it yet: dropping the
    /// claim removes it, so that a run that fails before writing leaves no empty file.
    unused_new_file: bool,
    /// The path held an earlier HDF5 file (a result of an earlier run), which
    /// [`OutputClaim::create_staged`] leaves as it is.
    earlier_file: bool,
    /// The new file beside the earlier one, written until [`OutputClaim::publish`] renames
    /// it over it, and its lock; dropping the claim before that removes it.
    staged: Option<(PathBuf, OsFile)>,
}

impl OutputClaim {
    /// Claims `path` for writing. Refuses, naming the file and the reason, when `path`
    /// is one of `inputs` (e.g. `-o` naming the configuration), when it exists and is not
    /// an HDF5 file (xnet replaces only files of its own kind), or when another process
    /// holds it. Nothing is truncated here; [`OutputClaim::holds_earlier_file`] tells the
    /// caller whether there is an earlier file to name.
    pub fn take(path: &Path, inputs: &[&Path]) -> Result<Self> {
        let existing = std::fs::metadata(path).ok();
        if let Some(input) = inputs.iter().find(|input| crate::load::same_file(path, input)) {
            anyhow::bail!(
                "output file {} is the input configuration {}: choose another -o",
                path.display(),
                input.display()
            );
        }
        let mut lock = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .with_context(|| format!("cannot open output file {}", path.display()))?;
        let head =
            first_bytes(&mut lock).with_context(|| format!("cannot read output file {}", path.display()))?;
        if !is_hdf5_or_empty(&head) {
            anyhow::bail!(
                "output file {} exists and is not an HDF5 file: xnet replaces only HDF5 files; \
                 remove it or choose another -o",
                path.display()
            );
        }
        match lock.try_lock() {
            Ok(()) => Ok(Self {
                path: path.to_path_buf(),
                lock,
                unused_new_file: existing.is_none(),
                earlier_file: !head.is_empty(),
                staged: None,
            }),
            Err(TryLockError::WouldBlock) => anyhow::bail!(
                "output file {} is in use by another process (another xnet run writing it, or a \
                 program reading it): it was left as it is; wait for that run or choose another -o",
                path.display()
            ),
            Err(TryLockError::Error(e)) => {
                Err(e).with_context(|| format!("cannot lock output file {}", path.display()))
            }
        }
    }

    /// Whether the path held an earlier file (an HDF5 file of an earlier run) when claimed.
    pub fn holds_earlier_file(&self) -> bool {
        self.earlier_file
    }

    /// The claimed path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Creates the HDF5 file (replacing what was there), under the claim.
    pub fn create(&mut self) -> Result<File> {
        self.unused_new_file = false;
        File::with_options()
            .with_fapl(|p| p.file_locking(false))
            .create(&self.path)
            .with_context(|| format!("cannot create output file {}", self.path.display()))
    }

    /// Creates the HDF5 file under the claim, leaving an earlier file at the path as it is:
    /// with one there, the new file is `PATH.new` beside it (locked like the path), which
    /// [`OutputClaim::publish`] renames over it once the run has something to keep; without
    /// one, it is the path itself ([`OutputClaim::write_path`]).
    pub fn create_staged(&mut self) -> Result<File> {
        if !self.earlier_file {
            return self.create();
        }
        let staged = self.write_path();
        remove_left_over(&staged)?;
        // Created afresh (O_EXCL, which never follows a link): nothing that was at the
        // name is written through or taken over.
        let lock = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&staged)
            .with_context(|| format!("cannot create {}", staged.display()))?;
        lock.try_lock().map_err(|e| anyhow::anyhow!("cannot lock {}: {e}", staged.display()))?;
        self.staged = Some((staged.clone(), lock));
        File::with_options()
            .with_fapl(|p| p.file_locking(false))
            .create(&staged)
            .with_context(|| format!("cannot create output file {}", staged.display()))
    }

    /// Where [`OutputClaim::create_staged`] writes: `PATH.new` when an earlier file is at
    /// the path, else the path.
    pub fn write_path(&self) -> PathBuf {
        if !self.earlier_file {
            return self.path.clone();
        }
        let mut name = self.path.file_name().unwrap_or_default().to_os_string();
        name.push(".new");
        self.path.with_file_name(name)
    }

    /// Whether the file written is still beside an earlier file, not yet renamed over it.
    pub fn is_staged(&self) -> bool {
        self.staged.is_some()
    }

    /// Renames the staged file (if any) over the earlier file: the run now has something to
    /// keep. The staged file's lock goes with it, so the path stays held.
    pub fn publish(&mut self) -> Result<()> {
        if let Some((staged, _)) = &self.staged {
            std::fs::rename(staged, &self.path)
                .with_context(|| format!("cannot rename {} to {}", staged.display(), self.path.display()))?;
            // Keep its lock (now the path's): the earlier file's lock is on a removed file.
            if let Some((_, lock)) = self.staged.take() {
                self.lock = lock;
            }
        }
        Ok(())
    }
}

/// Removes `staged` when it is what a killed run leaves there (an HDF5 file, or an empty
/// one); refuses, naming it, anything else: a link, a folder, another file. No other run
/// can be writing it, since that run would hold the claimed path.
fn remove_left_over(staged: &Path) -> Result<()> {
    let Ok(meta) = std::fs::symlink_metadata(staged) else {
        return Ok(());
    };
    let refuse = |what: &str| {
        anyhow::anyhow!(
            "{} is {what}: xnet writes the new results there until they replace the earlier file, \
             and removes only a file an interrupted run left; move it away or choose another -o",
            staged.display()
        )
    };
    if meta.file_type().is_symlink() {
        return Err(refuse("a symbolic link"));
    }
    if !meta.is_file() {
        return Err(refuse("not a regular file"));
    }
    let head = OsFile::open(staged)
        .and_then(|mut f| first_bytes(&mut f))
        .with_context(|| format!("cannot read {}", staged.display()))?;
    if !is_hdf5_or_empty(&head) {
        return Err(refuse("not an HDF5 file"));
    }
    std::fs::remove_file(staged).with_context(|| format!("cannot remove {}", staged.display()))
}

impl Drop for OutputClaim {
    fn drop(&mut self) {
        if let Some((staged, _)) = &self.staged {
            // Never published: the earlier file stays, and the new one goes.
            let _ = std::fs::remove_file(staged);
        }
        if self.unused_new_file {
            // Still under the lock, so no other run can have taken the file meanwhile.
            let _ = std::fs::remove_file(&self.path);
        }
        let _ = self.lock.unlock();
    }
}
