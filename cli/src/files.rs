//! Input and output files.
//!
//! * Inputs are memory-mapped (regular files; `-` and non-regular files such as FIFOs are read
//!   into memory), so a large input costs page-cache pages, not a private copy. What is read
//!   from a pipe or device is capped ([`pipe_limit`], 1 GiB unless `FZPACK_MAX_PIPE_BYTES`
//!   says otherwise): an endless stream stops with a clear error instead of growing the
//!   process without bound.
//! * Outputs are only ever regular files. An existing output that is not a regular file (a
//!   device node, a FIFO, a symbolic link, a directory) is refused even with `--force`, and so is
//!   an output that is one of the inputs (same device and inode, after resolving links). The
//!   bytes go to a unique temporary file next to the output, `.NAME.PID.RANDOM.fzpack-tmp`
//!   (created with `O_CREAT|O_EXCL|O_NOFOLLOW`, so a planted symlink is never followed and two
//!   runs never share a file), which is fsynced and then published: without `--force` by
//!   `renameat2(RENAME_NOREPLACE)` (or `link` + `unlink` where the file system lacks it), so of
//!   several runs racing for one new name exactly one wins and the others fail with "exists";
//!   with `--force` by `rename`, which replaces the output atomically. The directory is fsynced
//!   after. On an error the temporary file is removed (drop), and on SIGINT/SIGTERM/SIGHUP
//!   the signal thread removes it before the process dies of the signal. A run killed with
//!   SIGKILL leaves its temporary file; the PID in its name lets a later run writing the same
//!   output see that its writer is dead and remove it ([`remove_stale_temps`]). `-o -` writes
//!   to standard output.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::fail::{Fail, Kind};

/// Temporary files to remove if a terminating signal arrives. The signal thread holds the lock
/// while it removes them and kills the process, so a file is never created or renamed half-way
/// through that.
static TEMPS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Installs the SIGINT/SIGTERM/SIGHUP handler thread (once, at start-up).
///
/// `signal-hook`'s iterator runs the cleanup in an ordinary thread rather than in the
/// async-signal context, so it may take the lock and call `unlink`; afterwards it restores the
/// default disposition and re-raises the signal, so the exit status still says "killed by
/// SIGTERM" (as `ctrlc` would not for SIGTERM without extra features, and a hand-written
/// handler could not safely take a lock).
pub fn install_signal_cleanup() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return; // no handler: temporary files are still removed on every error path
    };
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            let temps = TEMPS.lock().unwrap_or_else(|e| e.into_inner());
            for p in temps.iter() {
                let _ = std::fs::remove_file(p);
            }
            let _ = signal_hook::low_level::emulate_default_handler(sig);
            std::process::exit(128 + sig);
        }
    });
}

fn is_dash(p: &Path) -> bool {
    p.as_os_str() == "-"
}

/// What a non-regular file type is, for messages.
fn kind_name(ft: std::fs::FileType) -> &'static str {
    if ft.is_symlink() {
        "a symbolic link"
    } else if ft.is_dir() {
        "a directory"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

fn read_error(path: &Path, e: std::io::Error) -> Fail {
    let what = match e.kind() {
        std::io::ErrorKind::NotFound => "no such file".to_string(),
        _ => e.to_string(),
    };
    Fail::new(Kind::Io, format!("cannot read {}: {what}", path.display()))
}

enum Bytes {
    Map(memmap2::Mmap),
    Owned(Vec<u8>),
}

/// An input file's bytes (mapped or read) and its identity.
pub struct Input {
    bytes: Bytes,
    /// (device, inode) of a file input; `None` for a pipe on standard input.
    id: Option<(u64, u64)>,
}

impl Input {
    /// Opens `path` (`-`: standard input) and maps or reads all of it.
    pub fn open(path: &Path) -> Result<Input, Fail> {
        Self::open_checked(path, |_| Ok(()))
    }

    /// As [`Input::open`], with `check` run on the first bytes (up to 4 KiB) of every input;
    /// for a non-regular input (a pipe, a device) before the rest is read, so e.g. `/dev/zero`
    /// is refused at once. The rest of a non-regular input is read up to [`pipe_limit`] bytes;
    /// more is an error (exit 4), so an endless stream never grows the process without bound.
    pub fn open_checked(
        path: &Path,
        check: impl Fn(&[u8]) -> Result<(), Fail>,
    ) -> Result<Input, Fail> {
        let (file, _) = open_source(path)?;
        let meta = file.metadata().map_err(|e| read_error(path, e))?;
        let id = Some((meta.dev(), meta.ino()));
        if meta.is_file() {
            if meta.len() == 0 {
                check(&[])?;
                return Ok(Input {
                    bytes: Bytes::Owned(Vec::new()),
                    id,
                });
            }
            // If another process truncates or rewrites the file while it is mapped, reads may
            // see the new bytes or fault (SIGBUS) — the documented risk of every mmap-based
            // tool; fzpack never writes through it and treats the bytes as untrusted input.
            // SAFETY: the mapping is read-only and private to this process (see above).
            let map = unsafe { memmap2::MmapOptions::new().map(&file) }
                .map_err(|e| read_error(path, e))?;
            let _ = map.advise(memmap2::Advice::Sequential);
            check(&map[..map.len().min(HEAD)])?;
            return Ok(Input {
                bytes: Bytes::Map(map),
                id,
            });
        }
        // A pipe or device: read the head, check it, then the rest (capped).
        let mut head = Vec::new();
        (&file)
            .take(HEAD as u64)
            .read_to_end(&mut head)
            .map_err(|e| read_error(path, e))?;
        check(&head)?;
        read_capped(&file, &mut head, pipe_limit(), path)?;
        let id = if meta.file_type().is_fifo() && is_dash(path) {
            None
        } else {
            id
        };
        Ok(Input {
            bytes: Bytes::Owned(head),
            id,
        })
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        match &self.bytes {
            Bytes::Map(m) => m,
            Bytes::Owned(v) => v,
        }
    }

    /// (device, inode), when the input is a file.
    pub fn id(&self) -> Option<(u64, u64)> {
        self.id
    }
}

/// Opens `path` (`-`: standard input) for reading as a stream, with whether it is a regular
/// file (which [`Input`] maps instead).
pub fn open_source(path: &Path) -> Result<(File, bool), Fail> {
    let file = if is_dash(path) {
        let fd = std::io::stdin()
            .lock()
            .as_fd_owned()
            .map_err(|e| read_error(path, e))?;
        File::from(fd)
    } else {
        File::open(path).map_err(|e| read_error(path, e))?
    };
    let meta = file.metadata().map_err(|e| read_error(path, e))?;
    if meta.is_dir() {
        return Err(Fail::new(
            Kind::Io,
            format!("cannot read {}: it is a directory", path.display()),
        ));
    }
    Ok((file, meta.is_file()))
}

/// Bytes of an input's head that [`Input::open_checked`]'s check sees.
const HEAD: usize = 4096;

/// The default cap on bytes read from a pipe or device: 1 GiB.
pub const PIPE_LIMIT: u64 = 1 << 30;

/// The cap on bytes read from a pipe or device: `FZPACK_MAX_PIPE_BYTES` from the environment
/// (a positive byte count), else [`PIPE_LIMIT`].
///
/// Such input is held in memory whole: an archive records its value count in its header and
/// SZp's NOA mode needs the value range before the first block is encoded, so nothing can be
/// written before the last byte is read (a regular file is mapped instead, at any size).
pub fn pipe_limit() -> u64 {
    std::env::var("FZPACK_MAX_PIPE_BYTES")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&b| b > 0)
        .unwrap_or(PIPE_LIMIT)
}

/// Appends the rest of `file` to `buf`, failing once more than `cap` bytes in all would be
/// held. The buffer grows by doubling but never past `cap`, so memory stays below about
/// `cap` plus one read.
fn read_capped(file: &File, buf: &mut Vec<u8>, cap: u64, path: &Path) -> Result<(), Fail> {
    let cap = usize::try_from(cap).unwrap_or(usize::MAX);
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let k = match (&*file).read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(k) => k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(read_error(path, e)),
        };
        let need = buf.len() + k;
        if need > cap {
            let what = if is_dash(path) {
                "standard input".to_string()
            } else {
                path.display().to_string()
            };
            return Err(Fail::new(
                Kind::Input,
                format!(
                    "{what}: more than {cap} bytes from a pipe or device; such input is held \
                     in memory whole (an archive records its value count, and NOA its value \
                     range, before the first block), up to FZPACK_MAX_PIPE_BYTES = {cap} \
                     bytes. Write the data to a regular file first (regular files are \
                     memory-mapped, any size), or raise FZPACK_MAX_PIPE_BYTES (`compress \
                     --abs E --max-abs M` streams input of any length in bounded memory)"
                ),
            ));
        }
        if need > buf.capacity() {
            let grow = need.max(buf.capacity().saturating_mul(2)).min(cap);
            buf.reserve_exact(grow - buf.len());
        }
        buf.extend_from_slice(&chunk[..k]);
    }
}

trait AsFdOwned {
    fn as_fd_owned(&self) -> std::io::Result<std::os::fd::OwnedFd>;
}

impl AsFdOwned for std::io::StdinLock<'_> {
    fn as_fd_owned(&self) -> std::io::Result<std::os::fd::OwnedFd> {
        use std::os::fd::AsFd;
        self.as_fd().try_clone_to_owned()
    }
}

/// Random characters in a temporary file's name: 8, or `FZPACK_TEMP_RAND_LEN` from the
/// environment — a test hook: with 0 the name is predictable (`.NAME.PID..fzpack-tmp`), so a
/// test that knows the PID can plant a symbolic link exactly there and check that it is neither followed nor replaced (creation then fails
/// with "exists", as `O_EXCL|O_NOFOLLOW` must).
fn temp_rand_len() -> usize {
    std::env::var("FZPACK_TEMP_RAND_LEN")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .map_or(8, |n| n.min(32))
}

enum Dest {
    Stdout(std::io::StdoutLock<'static>),
    File {
        tmp: tempfile::NamedTempFile,
        dir: PathBuf,
        _guard: TempGuard,
    },
}

/// Forgets a temporary file for the signal thread when dropped (the file itself is removed by
/// `NamedTempFile`'s drop, or renamed).
struct TempGuard(PathBuf);

impl Drop for TempGuard {
    fn drop(&mut self) {
        let mut temps = TEMPS.lock().unwrap_or_else(|e| e.into_inner());
        temps.retain(|q| *q != self.0);
    }
}

/// An output being written: standard output, or a temporary file that becomes `path` in
/// [`Output::finish`].
pub struct Output {
    path: PathBuf,
    dest: Dest,
    written: u64,
    /// (device, inode) of the inputs, checked again before the output is published.
    inputs: Vec<(u64, u64)>,
}

impl Output {
    /// Checks `path` and creates the temporary file next to it.
    ///
    /// Refuses (nothing is touched): an existing output without `force` (exit 7); an existing
    /// output that is not a regular file, even with `force` (exit 3); an output that is one of
    /// `inputs` (exit 2).
    pub fn create(path: &Path, force: bool, inputs: &[&Input]) -> Result<Output, Fail> {
        if is_dash(path) {
            return Ok(Output {
                path: path.to_path_buf(),
                dest: Dest::Stdout(std::io::stdout().lock()),
                written: 0,
                inputs: Vec::new(),
            });
        }
        let inputs: Vec<(u64, u64)> = inputs.iter().filter_map(|i| i.id()).collect();
        check_target(path, force, &inputs)?;
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let stem = path
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "out".into());
        remove_stale_temps(&parent, &stem);
        let mut temps = TEMPS.lock().unwrap_or_else(|e| e.into_inner());
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{stem}.{}.", std::process::id()))
            .suffix(".fzpack-tmp")
            .rand_bytes(temp_rand_len())
            .make_in(&parent, |p| {
                let f = OpenOptions::new()
                    .read(true) // a writable shared mapping needs O_RDWR
                    .write(true)
                    .create_new(true) // O_CREAT | O_EXCL: never an existing file or link
                    .mode(0o666) // as any new file: the umask applies
                    .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
                    .open(p)?;
                temps.push(p.to_path_buf());
                Ok(f)
            })
            .map_err(|e| {
                Fail::new(
                    Kind::Io,
                    format!(
                        "cannot create a temporary file in {} for {}: {e}",
                        parent.display(),
                        path.display()
                    ),
                )
            })?;
        drop(temps);
        let guard = TempGuard(tmp.path().to_path_buf());
        Ok(Output {
            path: path.to_path_buf(),
            dest: Dest::File {
                tmp,
                dir: parent,
                _guard: guard,
            },
            written: 0,
            inputs,
        })
    }

    /// Whether this writes to standard output.
    pub fn is_stdout(&self) -> bool {
        matches!(self.dest, Dest::Stdout(_))
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    fn write_fail(&self, e: std::io::Error) -> Fail {
        match &self.dest {
            Dest::Stdout(_) => Fail::new(Kind::Io, format!("cannot write to standard output: {e}")),
            Dest::File { tmp, .. } => Fail::new(
                Kind::Io,
                format!(
                    "cannot write {} (temporary file for {}): {e}",
                    tmp.path().display(),
                    self.path.display()
                ),
            ),
        }
    }

    /// Appends `bytes`.
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<(), Fail> {
        let r = match &mut self.dest {
            Dest::Stdout(s) => s.write_all(bytes),
            Dest::File { tmp, .. } => tmp.as_file_mut().write_all(bytes),
        };
        r.map_err(|e| self.write_fail(e))?;
        self.written += bytes.len() as u64;
        Ok(())
    }

    /// Appends the whole of `src` (from its start), e.g. a spool file.
    pub fn copy_from(&mut self, src: &mut File) -> Result<(), Fail> {
        use std::io::{Seek, SeekFrom};
        let r = src
            .seek(SeekFrom::Start(0))
            .and_then(|_| match &mut self.dest {
                Dest::Stdout(s) => std::io::copy(src, s),
                Dest::File { tmp, .. } => std::io::copy(src, tmp.as_file_mut()),
            });
        let k = r.map_err(|e| self.write_fail(e))?;
        self.written += k;
        Ok(())
    }

    /// Writes `bytes` at `offset` of the temporary file (positioned; not for standard output,
    /// see [`Output::is_stdout`]). Bytes written so far become the furthest end written.
    pub fn write_at(&mut self, offset: u64, bytes: &[u8]) -> Result<(), Fail> {
        use std::os::unix::fs::FileExt;
        let r = match &mut self.dest {
            Dest::Stdout(_) => Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "positioned write to standard output",
            )),
            Dest::File { tmp, .. } => tmp.as_file().write_all_at(bytes, offset),
        };
        r.map_err(|e| self.write_fail(e))?;
        self.written = self.written.max(offset + bytes.len() as u64);
        Ok(())
    }

    /// Gives the temporary file the length `len` with its blocks reserved
    /// (`posix_fallocate`), so that writes through [`Output::map`] cannot run out of space (a
    /// full disk under a mapping raises SIGBUS instead of returning an error). `written`
    /// becomes `len`. Not for standard output.
    pub fn reserve(&mut self, len: u64) -> Result<(), Fail> {
        let r = match &self.dest {
            Dest::Stdout(_) => Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "reserve on standard output",
            )),
            Dest::File { tmp, .. } => {
                use std::os::fd::AsRawFd;
                let f = tmp.as_file();
                f.set_len(len).and_then(|()| {
                    if len == 0 {
                        return Ok(());
                    }
                    let l = libc::off_t::try_from(len).map_err(std::io::Error::other)?;
                    // posix_fallocate reads no memory of ours.
                    // SAFETY: `f` is an open, writable descriptor owned by `tmp` during the call.
                    match unsafe { libc::posix_fallocate(f.as_raw_fd(), 0, l) } {
                        0 => Ok(()),
                        e => Err(std::io::Error::from_raw_os_error(e)),
                    }
                })
            }
        };
        r.map_err(|e| self.write_fail(e))?;
        self.written = len;
        Ok(())
    }

    /// Maps `len` bytes at `offset` of the temporary file (within [`Output::reserve`]'s
    /// length) for writing in place. Not for standard output.
    pub fn map(&mut self, offset: u64, len: usize) -> Result<memmap2::MmapMut, Fail> {
        let r = match &self.dest {
            Dest::Stdout(_) => Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "mapping standard output",
            )),
            // The temporary file was created by this process with O_EXCL under a random name
            // and is written only through this mapping and `self`.
            // SAFETY: its length covers the range (reserve): no access faults for lack of backing.
            Dest::File { tmp, .. } => unsafe {
                memmap2::MmapOptions::new()
                    .offset(offset)
                    .len(len)
                    .map_mut(tmp.as_file())
            },
        };
        r.map_err(|e| self.write_fail(e))
    }

    /// Makes the output final: flush (stdout), or fsync, publish and fsync the directory.
    ///
    /// Without `force` the temporary file is published without replacing anything
    /// (`renameat2(RENAME_NOREPLACE)`, or `link` + `unlink` where the file system lacks it:
    /// the `tempfile` crate's `persist_noclobber`), so when several runs race for one new name
    /// exactly one wins and the others fail with "exists" (exit 7). With `force` it is renamed
    /// over the output, which replaces it atomically: the output is always one whole file.
    pub fn finish(self, force: bool) -> Result<(), Fail> {
        match self.dest {
            Dest::Stdout(mut s) => s
                .flush()
                .map_err(|e| Fail::new(Kind::Io, format!("cannot write to standard output: {e}"))),
            Dest::File { tmp, dir, _guard } => {
                let tmp_path = tmp.path().to_path_buf();
                let fail = |what: &str, e: std::io::Error| {
                    Fail::new(
                        Kind::Io,
                        format!(
                            "cannot {what} {} (temporary file for {}): {e}",
                            tmp_path.display(),
                            self.path.display()
                        ),
                    )
                };
                tmp.as_file().sync_all().map_err(|e| fail("fsync", e))?;
                // The output may have changed while we worked: check it again (the rename
                // below is what makes "never replaced without --force" hold in a race).
                check_target(&self.path, force, &self.inputs)?;
                let mut temps = TEMPS.lock().unwrap_or_else(|e| e.into_inner());
                let r = if force {
                    tmp.persist(&self.path)
                } else {
                    tmp.persist_noclobber(&self.path)
                };
                temps.retain(|p| *p != tmp_path);
                drop(temps);
                drop(_guard);
                r.map_err(|e| {
                    let _ = std::fs::remove_file(&tmp_path);
                    if e.error.kind() == std::io::ErrorKind::AlreadyExists {
                        Fail::new(
                            Kind::Exists,
                            format!(
                                "{} already exists (use --force to overwrite)",
                                self.path.display()
                            ),
                        )
                    } else {
                        Fail::new(
                            Kind::Io,
                            format!(
                                "cannot rename {} to {}: {}",
                                tmp_path.display(),
                                self.path.display(),
                                e.error
                            ),
                        )
                    }
                })?;
                // The rename is durable once the directory is.
                if let Ok(d) = File::open(&dir) {
                    let _ = d.sync_all();
                }
                Ok(())
            }
        }
    }
}

/// Whether process `pid` is certainly gone: `kill(pid, 0)` fails with `ESRCH`. (`EPERM`
/// means it exists under another user; a reused PID reads as alive, which only keeps a stale
/// file longer.)
fn pid_is_dead(pid: u32) -> bool {
    let Ok(p) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if p <= 0 || pid == std::process::id() {
        return false;
    }
    // SAFETY: kill with signal 0 only checks that the process exists; it reads no memory.
    let r = unsafe { libc::kill(p, 0) };
    r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

/// The writer's PID of a temporary file name `.STEM.PID.RANDOM.fzpack-tmp` for `stem`.
pub fn temp_pid(name: &str, stem: &str) -> Option<u32> {
    let rest = name
        .strip_prefix('.')?
        .strip_prefix(stem)?
        .strip_prefix('.')?;
    let rest = rest.strip_suffix(".fzpack-tmp")?;
    let (pid, random) = rest.split_once('.')?;
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) || random.contains('.') {
        return None;
    }
    pid.parse().ok()
}

/// Removes the temporary files of earlier runs writing `stem` in `dir` whose writer is dead
/// (killed with SIGKILL, or the machine lost power): regular files owned by this user, named
/// `.STEM.PID.RANDOM.fzpack-tmp`, whose PID no longer exists. Anything else is left alone,
/// and errors are ignored (a leftover file is harmless). Runs of another host or PID
/// namespace sharing the directory are out of sight of `kill(2)`: their files can look
/// stale, so a shared directory should not be written from several machines at once.
pub fn remove_stale_temps(dir: &Path, stem: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    // SAFETY: getuid has no preconditions and reads no memory of ours.
    let uid = unsafe { libc::getuid() };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|n| temp_pid(n, stem)) else {
            continue;
        };
        let p = dir.join(&name);
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if m.file_type().is_file() && m.uid() == uid && pid_is_dead(pid) {
            let _ = std::fs::remove_file(&p);
        }
    }
}

/// The checks of [`Output::create`] on the output path itself.
fn check_target(path: &Path, force: bool, inputs: &[(u64, u64)]) -> Result<(), Fail> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(Fail::new(
                Kind::Io,
                format!("cannot write {}: {e}", path.display()),
            ));
        }
    };
    let ft = meta.file_type();
    if !ft.is_file() {
        return Err(Fail::new(
            Kind::Io,
            format!(
                "{} is {}; fzpack writes only regular files and does not replace it, even \
                 with --force",
                path.display(),
                kind_name(ft)
            ),
        ));
    }
    if inputs.contains(&(meta.dev(), meta.ino())) {
        return Err(Fail::new(
            Kind::Usage,
            format!(
                "{} is an input file itself (the same file, perhaps through a link); refusing \
                 to overwrite it, even with --force",
                path.display()
            ),
        ));
    }
    if !force {
        return Err(Fail::new(
            Kind::Exists,
            format!(
                "{} already exists (use --force to overwrite)",
                path.display()
            ),
        ));
    }
    Ok(())
}
