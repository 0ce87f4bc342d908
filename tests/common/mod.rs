//! Integration-test harness: throw-away `redis-server` processes (optionally
//! with the module loaded and/or a test-controlled wall clock).
//!
//! Used by many test files through `mod common;`, hence the blanket
//! `dead_code` allowance: every test binary uses a different subset.
//!
//! Environment knobs:
//! - `REDIS_SERVER`: server binary (default `redis-server` from `PATH`).
//!   `make test` runs the integration suite once per server: Debian's
//!   `redis-server` 7.0, Redis 8 (`scripts/install-redis8.sh`) and Valkey 9
//!   (`scripts/install-valkey.sh`). Tests that must tell them apart ask
//!   [`Server::version`].
//! - `REDIS_RL_MODULE`: module `.so` to load (default
//!   `<target dir>/release/libredis_rl.so`).
//!
//! Only the integration suite includes this module: each file that does is a
//! `[[test]]` in `Cargo.toml` that requires the `server-tests` feature (the
//! `compile_error!` below and `tests/split.rs` hold that), so plain
//! `cargo test` runs only the tests that need no server. Run these with
//! `make test` (every server) or `make test-integration`; by hand,
//! `cargo test --features test-hooks,server-tests --test NAME` with
//! `REDIS_SERVER` and `REDIS_RL_MODULE` set. Without a server binary or a
//! built module a test binary refuses in one line (exit status 2) instead of
//! failing each of its tests.
//!
//! Process hygiene: every server is killed (SIGKILL) and its temp dir removed
//! when its [`Server`] is dropped, including during a panic unwind. On top of
//! that, servers are spawned from one process-lifetime thread with
//! `PR_SET_PDEATHSIG = SIGKILL`, so even if the test binary itself dies
//! without unwinding (abort, SIGKILL, a `Server` in a `static`), the kernel
//! kills its servers.
#![allow(dead_code)]

#[cfg(not(feature = "server-tests"))]
compile_error!(
    "tests/common is the server harness: a test file that includes it (`mod common;`) needs a server, \
     so it belongs to the integration suite: add it to Cargo.toml as a [[test]] with \
     required-features = [\"server-tests\"] (see the `server-tests` feature there)"
);

pub mod cluster;
pub mod limiter;
pub mod replication;

use std::ffi::OsString;
use std::fs;
use std::io;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A round, realistic instant (2027-01-15T08:00:00Z) for frozen-clock tests.
pub const T0_MS: u64 = 1_800_000_000_000;

/// How long a server may take to answer PING after being spawned.
const STARTUP_DEADLINE: Duration = Duration::from_secs(10);
/// Attempts with a fresh port when the chosen one turns out to be taken.
const PORT_ATTEMPTS: usize = 5;

// ---------------------------------------------------------------------------
// Paths and binaries
// ---------------------------------------------------------------------------

/// Cargo's target directory: the parent of `CARGO_TARGET_TMPDIR` (which
/// honours `CARGO_TARGET_DIR`), else `<CARGO_MANIFEST_DIR>/target`.
fn target_dir() -> PathBuf {
    match option_env!("CARGO_TARGET_TMPDIR").map(Path::new).and_then(Path::parent) {
        Some(p) => p.to_path_buf(),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target"),
    }
}

/// Scratch directory for build artefacts of the harness (`fakeclock-*.so`).
fn target_tmp_dir() -> PathBuf {
    match option_env!("CARGO_TARGET_TMPDIR") {
        Some(p) => PathBuf::from(p),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target"),
    }
}

/// Absolute path of the module to load: `$REDIS_RL_MODULE` if set, else
/// `<target dir>/release/libredis_rl.so` (normally
/// `<CARGO_MANIFEST_DIR>/target/release/libredis_rl.so`).
///
/// Absolute because redis-server chdirs into `--dir` before loading modules.
pub fn module_path() -> PathBuf {
    let p = match std::env::var_os("REDIS_RL_MODULE") {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => target_dir().join("release").join("libredis_rl.so"),
    };
    let p = std::path::absolute(&p).unwrap_or(p);
    if !p.is_file() {
        refuse(&format!("the module is not built [looked for {}; override with REDIS_RL_MODULE]", p.display()));
    }
    p
}

/// Server binary: `$REDIS_SERVER` if set, else `redis-server` (from `PATH`).
/// Refuses (see [`refuse`]) if it cannot be run, once per test process.
pub fn server_binary() -> String {
    let bin = match std::env::var("REDIS_SERVER") {
        Ok(v) if !v.is_empty() => v,
        _ => "redis-server".to_string(),
    };
    static RUNS: OnceLock<Result<(), String>> = OnceLock::new();
    let runs = RUNS.get_or_init(|| match Command::new(&bin).arg("--version").stdin(Stdio::null()).output() {
        Ok(_) => Ok(()),
        Err(e) => Err(format!("cannot run the server `{bin}`: {e} [override with REDIS_SERVER]")),
    });
    if let Err(why) = runs {
        refuse(why);
    }
    bin
}

/// Ends the whole test process with one line on stderr and exit status 2,
/// when the environment has no server or no module: the same reason would
/// otherwise fail every test of the file, each with a panic.
fn refuse(why: &str) -> ! {
    use std::io::Write;
    // The first test to get here speaks; the others wait for the exit.
    static ONE: Mutex<()> = Mutex::new(());
    let _one = ONE.lock();
    let exe = std::env::args().next().unwrap_or_default();
    let name = Path::new(&exe).file_name().and_then(|n| n.to_str()).unwrap_or("");
    // The test binary is `<name>-<hash>`.
    let name = name.rsplit_once('-').map_or(name, |(n, _)| n);
    let line = format!(
        "tests/{name}.rs needs a redis-server and the module: run `make test` (or set REDIS_SERVER and \
         REDIS_RL_MODULE after `make build`): {why}\n"
    );
    // Straight to the file descriptor: the test harness captures `eprintln!`.
    let _ = std::io::stderr().write_all(line.as_bytes());
    std::process::exit(2);
}

/// The server binary and what its `--version` says, e.g.
/// `/usr/bin/redis-server (Redis server v=7.0.15 ...)`: printed with every
/// start-up failure, so a failure names the server it happened on. Run once
/// per test process.
pub fn server_description() -> String {
    static DESC: OnceLock<String> = OnceLock::new();
    DESC.get_or_init(|| {
        let bin = server_binary();
        let version = match Command::new(&bin).arg("--version").stdin(Stdio::null()).output() {
            Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).trim().to_string(),
            Ok(out) => format!("`--version` failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr).trim()),
            Err(e) => format!("cannot run it: {e}"),
        };
        format!("{bin} ({version})")
    })
    .clone()
}

/// Which server a [`Server`] runs, from its `INFO server`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerVersion {
    /// `"valkey"` or `"redis"` (`server_name`, which Redis 7.x lacks).
    pub name: String,
    /// `valkey_version` on Valkey (whose `redis_version` is a compatibility
    /// value), else `redis_version`.
    pub version: (u32, u32, u32),
}

impl ServerVersion {
    pub fn is_valkey(&self) -> bool {
        self.name == "valkey"
    }

    /// At least `major.minor.patch` of this server's own numbering.
    pub fn at_least(&self, major: u32, minor: u32, patch: u32) -> bool {
        self.version >= (major, minor, patch)
    }

    /// Parses `INFO server` text.
    pub fn from_info(info: &str) -> ServerVersion {
        let field = |name: &str| {
            info.lines().find_map(|l| l.trim_end().strip_prefix(name)?.strip_prefix(':').map(str::to_string))
        };
        let name = field("server_name").unwrap_or_else(|| "redis".to_string());
        let raw = field(&format!("{name}_version"))
            .or_else(|| field("redis_version"))
            .unwrap_or_else(|| panic!("no version in INFO server:\n{info}"));
        let mut parts = raw.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
        let version = (parts.next().unwrap_or(0), parts.next().unwrap_or(0), parts.next().unwrap_or(0));
        ServerVersion { name, version }
    }
}

impl std::fmt::Display for ServerVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (a, b, c) = self.version;
        write!(f, "{} {a}.{b}.{c}", self.name)
    }
}

/// Path of the compiled `fakeclock.c` shim. Compiled once per test-binary
/// process into `<CARGO_TARGET_TMPDIR>/fakeclock-<pid>.so` (via a temp name
/// and an atomic `rename`, so concurrently running test binaries never see
/// a half-written file). Stale copies left by dead processes are removed.
pub fn fakeclock_so() -> PathBuf {
    static SO: OnceLock<PathBuf> = OnceLock::new();
    SO.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/common/fakeclock.c");
        let dir = target_tmp_dir();
        fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
        remove_stale_fakeclocks(&dir);

        let pid = std::process::id();
        let dst = dir.join(format!("fakeclock-{pid}.so"));
        let tmp = dir.join(format!("fakeclock-{pid}.so.tmp"));
        let out =
            Command::new("cc").args(["-shared", "-fPIC", "-O2", "-o"]).arg(&tmp).arg(&src).output().unwrap_or_else(
                |e| panic!("cannot run `cc` to compile {}: {e} (is a C compiler installed?)", src.display()),
            );
        if !out.status.success() {
            let _ = fs::remove_file(&tmp);
            panic!(
                "compiling {} with `cc` failed ({}):\n{}{}",
                src.display(),
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        fs::rename(&tmp, &dst).unwrap_or_else(|e| panic!("rename {} -> {}: {e}", tmp.display(), dst.display()));
        dst
    })
    .clone()
}

/// Deletes `fakeclock-<pid>.so[.tmp]` files whose process no longer exists.
fn remove_stale_fakeclocks(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(rest) = name.strip_prefix("fakeclock-") else {
            continue;
        };
        let Some(pid) = rest.strip_suffix(".so").or_else(|| rest.strip_suffix(".so.tmp")) else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// A currently free loopback TCP port (never 6379). Another process may grab
/// it before we use it; [`Server::start_with`] retries in that case.
pub fn free_port() -> u16 {
    loop {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let port = listener.local_addr().expect("local_addr").port();
        drop(listener);
        if port != 6379 {
            return port;
        }
    }
}

/// Current real wall-clock time in milliseconds since the Unix epoch.
pub fn epoch_ms_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("system clock before 1970").as_millis() as u64
}

fn make_temp_dir() -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("redis-rl-test-{}-{n}", std::process::id()));
    // Left over by an earlier process that had the same pid: start clean.
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}

fn file_len(p: &Path) -> u64 {
    fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

/// Content of `p` from byte `offset` on (lossy UTF-8; empty if missing).
fn read_from(p: &Path, offset: u64) -> String {
    let bytes = fs::read(p).unwrap_or_default();
    let start = (offset as usize).min(bytes.len());
    String::from_utf8_lossy(&bytes[start..]).into_owned()
}

fn tail_lines(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

// ---------------------------------------------------------------------------
// Spawning with PR_SET_PDEATHSIG
// ---------------------------------------------------------------------------

type SpawnRequest = (Command, mpsc::Sender<io::Result<Child>>);

/// Spawns `cmd` from a dedicated thread that lives as long as the process.
/// `PR_SET_PDEATHSIG` fires when the *thread* that forked the child exits, so
/// forking from short-lived test threads would kill servers too early; from
/// this thread it only fires when the whole test process goes away.
fn spawn_child(mut cmd: Command) -> io::Result<Child> {
    static SPAWNER: OnceLock<mpsc::Sender<SpawnRequest>> = OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        thread::Builder::new()
            .name("redis-rl-test-spawner".into())
            .spawn(move || {
                for (mut cmd, reply) in rx {
                    let _ = reply.send(cmd.spawn());
                }
            })
            .expect("spawn the server-spawner thread");
        tx
    });

    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: the closure only calls async-signal-safe functions and does
        // not allocate.
        let parent = unsafe { libc::getpid() };
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                    return Err(io::Error::last_os_error());
                }
                // The parent died between fork() and prctl(): don't run.
                if libc::getppid() != parent {
                    return Err(io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            });
        }
    }

    let (reply_tx, reply_rx) = mpsc::channel();
    spawner.send((cmd, reply_tx)).map_err(|_| io::Error::other("server-spawner thread is gone"))?;
    reply_rx.recv().map_err(|_| io::Error::other("server-spawner thread is gone"))?
}

// ---------------------------------------------------------------------------
// Fake clock
// ---------------------------------------------------------------------------

/// Current setting of a [`FakeClock`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockMode {
    /// Real time plus this many microseconds.
    Offset(i64),
    /// Time stands still at this many microseconds since the Unix epoch.
    Frozen(u64),
}

/// Handle on the control file read by `fakeclock.so` inside a server started
/// with `fake_clock: true`. Every change is visible to the server's very next
/// `gettimeofday`/`clock_gettime(CLOCK_REALTIME)`/`time` call, so to the
/// very next command, on Redis 7.0, Redis 8 and Valkey alike (the shim keeps
/// Valkey on its POSIX monotonic clock, where it reads the wall clock on every
/// call instead of extrapolating it for up to 1 ms; Redis reads it every time
/// anyway). The monotonic clocks
/// stay real in every mode, so the server's timers (replication, BGSAVE,
/// active expiry) keep running while the wall clock is frozen: see
/// `fakeclock.c`.
///
/// Note on Redis semantics: a key is expired only once `now > expire_at`; at
/// `now == expire_at` it still exists with `PTTL` 0.
#[derive(Debug)]
pub struct FakeClock {
    path: PathBuf,
    mode: Mutex<ClockMode>,
}

impl FakeClock {
    /// Creates the control file at `path`, initialised to `+0` (real time).
    pub fn create(path: PathBuf) -> FakeClock {
        let clock = FakeClock { path, mode: Mutex::new(ClockMode::Offset(0)) };
        clock.set(ClockMode::Offset(0));
        clock
    }

    /// The control file (what `FAKECLOCK_FILE` points to).
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn mode(&self) -> ClockMode {
        *self.mode.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets the clock and writes the control file atomically
    /// (`<path>.tmp` + `rename`).
    pub fn set(&self, mode: ClockMode) {
        let mut guard = self.mode.lock().unwrap_or_else(|e| e.into_inner());
        self.write_file(mode);
        *guard = mode;
    }

    fn write_file(&self, mode: ClockMode) {
        let text = match mode {
            ClockMode::Frozen(t) => {
                assert!(t <= i64::MAX as u64, "frozen time {t} us out of range");
                format!("@{t}\n")
            }
            ClockMode::Offset(o) => {
                assert!(o != i64::MIN, "offset out of range");
                if o < 0 {
                    format!("-{}\n", o.unsigned_abs())
                } else {
                    format!("+{o}\n")
                }
            }
        };
        let mut tmp: OsString = self.path.clone().into_os_string();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        fs::write(&tmp, text).unwrap_or_else(|e| panic!("write {}: {e}", tmp.display()));
        fs::rename(&tmp, &self.path)
            .unwrap_or_else(|e| panic!("rename {} -> {}: {e}", tmp.display(), self.path.display()));
    }

    /// Freezes the clock at `t_us` microseconds since the Unix epoch.
    pub fn freeze_at_us(&self, t_us: u64) {
        self.set(ClockMode::Frozen(t_us));
    }

    /// Freezes the clock at `t_ms` milliseconds since the Unix epoch.
    pub fn freeze_at_ms(&self, t_ms: u64) {
        let t_us = t_ms.checked_mul(1000).expect("freeze_at_ms: overflow");
        self.set(ClockMode::Frozen(t_us));
    }

    /// Lets the clock run again, `off` microseconds away from real time.
    pub fn set_offset_us(&self, off: i64) {
        self.set(ClockMode::Offset(off));
    }

    pub fn set_offset_ms(&self, off: i64) {
        self.set(ClockMode::Offset(off.checked_mul(1000).expect("set_offset_ms: overflow")));
    }

    /// Moves the clock by `d_us` microseconds (may be negative): shifts the
    /// frozen instant if frozen, else adds to the offset.
    pub fn advance_us(&self, d_us: i64) {
        // Hold the lock across read-modify-write so concurrent advances add up.
        let mut guard = self.mode.lock().unwrap_or_else(|e| e.into_inner());
        let next = match *guard {
            ClockMode::Frozen(t) => {
                ClockMode::Frozen(t.checked_add_signed(d_us).expect("advance: frozen time out of range"))
            }
            ClockMode::Offset(o) => ClockMode::Offset(o.checked_add(d_us).expect("advance: offset out of range")),
        };
        self.write_file(next);
        *guard = next;
    }

    /// Moves the clock by `d` milliseconds (may be negative).
    pub fn advance_ms(&self, d: i64) {
        self.advance_us(d.checked_mul(1000).expect("advance_ms: overflow"));
    }

    /// The frozen time in milliseconds (truncated), or `None` if running.
    pub fn now_ms(&self) -> Option<u64> {
        self.now_us().map(|us| us / 1000)
    }

    /// The frozen time in microseconds, or `None` if running.
    pub fn now_us(&self) -> Option<u64> {
        match self.mode() {
            ClockMode::Frozen(t) => Some(t),
            ClockMode::Offset(_) => None,
        }
    }
}

// ---------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------

/// How to start a [`Server`].
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// `--loadmodule <module_path()>` (default `true`).
    pub load_module: bool,
    /// Preload `fakeclock.so`; the clock is then driven through
    /// [`Server::clock`] (default `false`).
    pub fake_clock: bool,
    /// Appended verbatim after the standard arguments, one argv element each
    /// (e.g. `["--maxmemory", "10mb"]`); later options override earlier ones.
    pub extra_args: Vec<String>,
    /// Module arguments, after the module's path (e.g. `["top-capacity", "0"]`).
    pub module_args: Vec<String>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions { load_module: true, fake_clock: false, extra_args: Vec::new(), module_args: Vec::new() }
    }
}

enum LaunchError {
    /// The port was taken by someone else: retry with another port.
    AddrInUse,
    Failed(String),
}

/// A throw-away server on `127.0.0.1:<port>` with its own temp dir. Killed
/// and cleaned up on drop.
pub struct Server {
    pub port: u16,
    /// `Some` iff started with `fake_clock: true`.
    pub clock: Option<FakeClock>,
    opts: ServerOptions,
    module: Option<PathBuf>,
    dir: PathBuf,
    child: Mutex<Option<Child>>,
    pid: u32,
}

impl Server {
    /// A server with the module loaded and the real clock.
    pub fn start() -> Server {
        Server::start_with(ServerOptions::default())
    }

    pub fn start_with(opts: ServerOptions) -> Server {
        let module = opts.load_module.then(module_path);
        let dir = make_temp_dir();
        let clock = opts.fake_clock.then(|| FakeClock::create(dir.join("clock")));
        // From here on, Drop cleans up (also if we panic below).
        let mut server = Server { port: 0, clock, opts, module, dir, child: Mutex::new(None), pid: 0 };
        for attempt in 1..=PORT_ATTEMPTS {
            server.port = free_port();
            let _ = fs::remove_file(server.log_path());
            let _ = fs::remove_file(server.stdio_path());
            match server.launch() {
                Ok(()) => return server,
                Err(LaunchError::AddrInUse) if attempt < PORT_ATTEMPTS => continue,
                Err(LaunchError::AddrInUse) => {
                    let msg = server.failure(&format!("could not find a free port in {PORT_ATTEMPTS} attempts"));
                    panic!("{msg}");
                }
                Err(LaunchError::Failed(why)) => {
                    let msg = server.failure(&why);
                    panic!("{msg}");
                }
            }
        }
        unreachable!()
    }

    /// Kills the server (SIGKILL: no shutdown save/AOF rewrite) and starts it
    /// again with the same binary, port, dir, arguments and clock file.
    pub fn restart(&mut self) {
        self.kill_child();
        let mut last = String::new();
        for attempt in 1..=PORT_ATTEMPTS {
            match self.launch() {
                Ok(()) => return,
                Err(LaunchError::AddrInUse) => {
                    last = format!("port {} still in use after {attempt} attempt(s)", self.port);
                    thread::sleep(Duration::from_millis(100 * attempt as u64));
                }
                Err(LaunchError::Failed(why)) => {
                    last = why;
                    break;
                }
            }
        }
        let msg = self.failure(&format!("restart failed: {last}"));
        panic!("{msg}");
    }

    /// `redis://127.0.0.1:<port>/` (RESP2).
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// `redis://127.0.0.1:<port>/?protocol=resp3`: the redis crate then sends
    /// `HELLO 3` while connecting.
    pub fn url_resp3(&self) -> String {
        format!("redis://127.0.0.1:{}/?protocol=resp3", self.port)
    }

    /// A new RESP2 connection.
    ///
    /// Deliberately WITHOUT read/write timeouts: on a socket with
    /// `SO_RCVTIMEO`/`SO_SNDTIMEO`, Linux fails a blocked `recv`/`send` with
    /// `EINTR` when a signal is queued for the process, even one whose action
    /// is "ignore" (e.g. SIGCHLD from a short-lived child another test spawns
    /// with `Command::output`, which glibc's posix_spawn briefly blocks), and
    /// the redis crate does not retry: tests would fail randomly with
    /// "Interrupted system call (os error 4)". Without a timeout the kernel
    /// restarts the call transparently. Set a timeout yourself only if you
    /// can tolerate that.
    pub fn conn(&self) -> redis::Connection {
        self.connect(&self.url())
    }

    /// A new RESP3 connection (`HELLO 3` is sent while connecting). Same
    /// no-timeout rationale as [`conn`](Self::conn).
    pub fn conn_resp3(&self) -> redis::Connection {
        self.connect(&self.url_resp3())
    }

    fn connect(&self, url: &str) -> redis::Connection {
        let client = redis::Client::open(url).unwrap_or_else(|e| panic!("bad url {url}: {e}"));
        // The timeout only bounds the TCP connect (std retries EINTR there).
        client
            .get_connection_with_timeout(Duration::from_secs(5))
            .unwrap_or_else(|e| panic!("connect to {url} ({}): {e}\n{}", server_description(), self.log_tail()))
    }

    /// Name and version of the running server (`INFO server`).
    pub fn version(&self) -> ServerVersion {
        let info: String = redis::cmd("INFO")
            .arg("server")
            .query(&mut self.conn())
            .unwrap_or_else(|e| panic!("INFO server on {}: {e}", server_description()));
        ServerVersion::from_info(&info)
    }

    /// Pid of the current server process (changes on [`restart`](Self::restart)).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The server's `--dir` (working directory: RDB/AOF files, logs, clock).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn log_path(&self) -> PathBuf {
        self.dir.join("redis.log")
    }

    /// Captured stdout/stderr of the process (early start-up errors go there).
    fn stdio_path(&self) -> PathBuf {
        self.dir.join("stdio.log")
    }

    /// The last lines of `redis.log` (plus stdout/stderr if non-empty).
    pub fn log_tail(&self) -> String {
        let mut s = format!(
            "--- {} (last 50 lines) ---\n{}\n",
            self.log_path().display(),
            tail_lines(&read_from(&self.log_path(), 0), 50)
        );
        let stdio = read_from(&self.stdio_path(), 0);
        if !stdio.trim().is_empty() {
            s.push_str(&format!("--- stdout/stderr (last 20 lines) ---\n{}\n", tail_lines(&stdio, 20)));
        }
        s
    }

    /// The process has not exited and answers PING.
    pub fn alive(&self) -> bool {
        let running = {
            let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
            match child.as_mut() {
                Some(c) => matches!(c.try_wait(), Ok(None)),
                None => false,
            }
        };
        // ping_is_us uses socket timeouts, so it can fail spuriously with
        // EINTR (see `conn`): give it a few chances.
        running && (0..3).any(|_| self.ping_is_us())
    }

    /// The argv (without the binary) for the current port.
    fn args(&self) -> Vec<OsString> {
        let port = self.port.to_string();
        #[rustfmt::skip]
        let mut a: Vec<OsString> = [
            "--port", &port,
            "--bind", "127.0.0.1",
            "--save", "",
            "--appendonly", "no",
            "--daemonize", "no",
            "--protected-mode", "yes",
            "--enable-debug-command", "local",
            "--loglevel", "notice",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        a.push("--dir".into());
        a.push(self.dir.clone().into_os_string());
        a.push("--logfile".into());
        a.push(self.log_path().into_os_string());
        if let Some(m) = &self.module {
            a.push("--loadmodule".into());
            a.push(m.clone().into_os_string());
            a.extend(self.opts.module_args.iter().map(OsString::from));
        }
        a.extend(self.opts.extra_args.iter().map(OsString::from));
        a
    }

    /// Spawns the server on `self.port` and waits until it answers PING.
    fn launch(&mut self) -> Result<(), LaunchError> {
        let log_off = file_len(&self.log_path());
        let stdio_off = file_len(&self.stdio_path());
        let stdio = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.stdio_path())
            .map_err(|e| LaunchError::Failed(format!("open stdio log: {e}")))?;
        let stdio2 = stdio.try_clone().map_err(|e| LaunchError::Failed(format!("dup stdio log: {e}")))?;

        let bin = server_binary();
        let mut cmd = Command::new(&bin);
        cmd.args(self.args()).current_dir(&self.dir).stdin(Stdio::null()).stdout(stdio).stderr(stdio2);
        match &self.clock {
            Some(clock) => {
                let so = fakeclock_so().into_os_string();
                let preload = match std::env::var_os("LD_PRELOAD") {
                    Some(prev) if !prev.is_empty() => {
                        let mut v = so;
                        v.push(":");
                        v.push(prev);
                        v
                    }
                    _ => so,
                };
                cmd.env("LD_PRELOAD", preload).env("FAKECLOCK_FILE", clock.path());
            }
            None => {
                cmd.env_remove("FAKECLOCK_FILE");
            }
        }

        let child = spawn_child(cmd).map_err(|e| LaunchError::Failed(format!("cannot spawn `{bin}`: {e}")))?;
        self.pid = child.id();
        *self.child.get_mut().unwrap_or_else(|e| e.into_inner()) = Some(child);

        let deadline = Instant::now() + STARTUP_DEADLINE;
        loop {
            let exited: Option<ExitStatus> = {
                let mut guard = self.child.lock().unwrap_or_else(|e| e.into_inner());
                let c = guard.as_mut().expect("child present");
                match c.try_wait() {
                    Ok(Some(status)) => {
                        *guard = None;
                        Some(status)
                    }
                    Ok(None) => None,
                    Err(e) => return Err(LaunchError::Failed(format!("waitpid: {e}"))),
                }
            };
            if let Some(status) = exited {
                let new_output = read_from(&self.log_path(), log_off) + &read_from(&self.stdio_path(), stdio_off);
                if new_output.contains("Address already in use") {
                    return Err(LaunchError::AddrInUse);
                }
                return Err(LaunchError::Failed(format!("`{bin}` exited during start-up ({status})")));
            }
            // PONG from *our* pid: if somebody else owns the port, our server
            // is about to exit with "Address already in use" (handled above).
            if self.ping_is_us() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                self.kill_child();
                return Err(LaunchError::Failed(format!(
                    "`{bin}` did not answer PING on port {} within {:?}",
                    self.port, STARTUP_DEADLINE
                )));
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// PING answers PONG and `INFO server` reports our child's pid.
    fn ping_is_us(&self) -> bool {
        let Ok(client) = redis::Client::open(self.url()) else {
            return false;
        };
        let Ok(mut c) = client.get_connection_with_timeout(Duration::from_millis(500)) else {
            return false;
        };
        let _ = c.set_read_timeout(Some(Duration::from_secs(2)));
        let _ = c.set_write_timeout(Some(Duration::from_secs(2)));
        match redis::cmd("PING").query::<String>(&mut c) {
            Ok(p) if p == "PONG" => {}
            _ => return false,
        }
        let Ok(info) = redis::cmd("INFO").arg("server").query::<String>(&mut c) else {
            return false;
        };
        let want = format!("process_id:{}", self.pid);
        info.lines().any(|l| l.trim_end() == want)
    }

    fn kill_child(&mut self) {
        let child = self.child.get_mut().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(mut c) = child {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    fn failure(&mut self, why: &str) -> String {
        self.kill_child();
        format!(
            "server failed to start on {}: {why}\n  command: {} {}\n{}",
            server_description(),
            server_binary(),
            self.args().iter().map(|a| format!("{:?}", a.to_string_lossy())).collect::<Vec<_>>().join(" "),
            self.log_tail()
        )
    }
}

/// A server with the module loaded and its wall clock frozen at [`T0_MS`]
/// (the fake clock); `extra_args` are added to its command line (`&[]` for
/// none).
pub fn frozen_server(extra_args: &[&str]) -> Server {
    let s = Server::start_with(ServerOptions {
        fake_clock: true,
        extra_args: extra_args.iter().map(|a| a.to_string()).collect(),
        ..Default::default()
    });
    s.clock.as_ref().unwrap().freeze_at_ms(T0_MS);
    s
}

/// Moves the fake clock of `s` (started with `fake_clock: true`) by `ms`
/// milliseconds, back if negative: see [`FakeClock::advance_ms`].
pub fn advance(s: &Server, ms: i64) {
    s.clock.as_ref().unwrap().advance_ms(ms);
}

/// Stops the fake clock of `s` (started with `fake_clock: true`) at `ms`
/// milliseconds since the Unix epoch.
pub fn freeze(s: &Server, ms: u64) {
    s.clock.as_ref().unwrap().freeze_at_ms(ms);
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill_child();
        let _ = fs::remove_dir_all(&self.dir);
    }
}
