//! A fault-injecting redb storage backend for tests (compiled only into test
//! binaries): an in-memory file with a *volatile* image (what reads see, like the
//! page cache) and a *durable* image (what survives power loss: brought up to date
//! only by `sync_data`), and a schedule of faults keyed by call number.
//!
//! Every call of `read`, `write`, `set_len` and `sync_data` gets the next call
//! number (from 1). A scheduled fault fires at its call:
//!
//! * [`Fault::Fail`]: the call fails with EIO or ENOSPC (an `std::io::Error` of
//!   that raw OS error) and changes nothing; later calls succeed again.
//! * [`Fault::Tear`]: a write; only a prefix of it reaches the volatile image, the
//!   call fails with EIO, and the power goes off.
//! * [`Fault::PowerLoss`]: the power goes off before the call.
//!
//! With the power off every call fails with EIO and nothing more reaches either
//! image. [`FaultFile::after_power_loss`] is what a reboot finds: the durable image
//! plus, when asked, a seeded subset of the writes since the last sync, some of them
//! torn (unsynced writes reach the media in no promised order or size).

use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

use redb::StorageBackend;

/// `EIO` on Linux (and every Unix lorebank runs on).
pub const EIO: i32 = 5;
/// `ENOSPC` on Linux.
pub const ENOSPC: i32 = 28;

/// The kinds of calls that count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `read`.
    Read,
    /// `write`.
    Write,
    /// `set_len`.
    SetLen,
    /// `sync_data`.
    Sync,
}

/// What happens at a scheduled call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The call fails with this raw OS error and changes nothing.
    Fail(i32),
    /// If the call is a write: `keep` bytes of it (at most) reach the volatile image,
    /// then the power goes off. Any other call: power loss before it.
    Tear { keep: usize },
    /// The power goes off before the call.
    PowerLoss,
}

/// A write or length change not yet synced.
#[derive(Clone, Debug)]
enum Pending {
    Write { offset: u64, data: Vec<u8> },
    SetLen(u64),
}

#[derive(Debug, Default)]
struct State {
    volatile: Vec<u8>,
    durable: Vec<u8>,
    pending: Vec<Pending>,
    calls: u64,
    schedule: Vec<(u64, Fault)>,
    powered_off: bool,
    /// `sync_data` succeeds without making anything durable (a disk that lies).
    sync_lies: bool,
    /// Faults that fired: (call number, the call, the fault).
    fired: Vec<(u64, Op, Fault)>,
}

/// The shared state of one simulated file: several backends (one per open) can
/// point at it, and the test keeps one to inspect it.
#[derive(Clone, Debug, Default)]
pub struct FaultFile {
    state: Arc<Mutex<State>>,
}

fn apply(image: &mut Vec<u8>, pending: &Pending) {
    match pending {
        Pending::Write { offset, data } => {
            let start = usize::try_from(*offset).expect("offset fits");
            let end = start + data.len();
            if image.len() < end {
                image.resize(end, 0);
            }
            image[start..end].copy_from_slice(data);
        }
        Pending::SetLen(len) => image.resize(usize::try_from(*len).expect("length fits"), 0),
    }
}

fn os_error(code: i32) -> io::Error {
    io::Error::from_raw_os_error(code)
}

impl FaultFile {
    /// An empty file.
    pub fn new() -> FaultFile {
        FaultFile::default()
    }

    /// A file whose volatile and durable images are both `image` (a file at rest).
    pub fn from_image(image: Vec<u8>) -> FaultFile {
        let file = FaultFile::new();
        {
            let mut state = file.lock();
            state.volatile = image.clone();
            state.durable = image;
        }
        file
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A backend on this file, for `Ledger::create_with_backend` / `open_with_backend`.
    pub fn backend(&self) -> FaultBackend {
        FaultBackend { file: self.clone() }
    }

    /// Schedules `fault` at call number `call` (counted from 1 over every read,
    /// write, `set_len` and `sync_data` from now on, continuing the count so far).
    pub fn schedule(&self, call: u64, fault: Fault) {
        self.lock().schedule.push((call, fault));
    }

    /// Calls so far.
    pub fn calls(&self) -> u64 {
        self.lock().calls
    }

    /// The faults that fired.
    pub fn fired(&self) -> Vec<(u64, Op, Fault)> {
        self.lock().fired.clone()
    }

    /// Whether the power is off.
    pub fn powered_off(&self) -> bool {
        self.lock().powered_off
    }

    /// From now on `sync_data` returns `Ok` and makes nothing durable, as a disk
    /// with a volatile write cache that ignores flushes.
    pub fn sync_lies(&self) {
        self.lock().sync_lies = true;
    }

    /// Turns the power off now.
    pub fn power_off(&self) {
        self.lock().powered_off = true;
    }

    /// What reads see now (what a process that restarts without a power loss finds).
    pub fn volatile(&self) -> Vec<u8> {
        self.lock().volatile.clone()
    }

    /// The image as of the last sync.
    pub fn durable(&self) -> Vec<u8> {
        self.lock().durable.clone()
    }

    /// What a reboot after power loss finds: the durable image plus, chosen by
    /// `pick` (called once per unsynced write or length change, in order; `None`
    /// drops it, `Some(n)` keeps at most `n` bytes of a write), some of the
    /// unsynced changes.
    pub fn after_power_loss(&self, mut pick: impl FnMut(usize) -> Option<usize>) -> Vec<u8> {
        let state = self.lock();
        let mut image = state.durable.clone();
        for pending in &state.pending {
            let size = match pending {
                Pending::Write { data, .. } => data.len(),
                Pending::SetLen(_) => 0,
            };
            match (pick(size), pending) {
                (None, _) => {}
                (Some(keep), Pending::Write { offset, data }) => {
                    let data = data[..keep.min(data.len())].to_vec();
                    apply(&mut image, &Pending::Write { offset: *offset, data });
                }
                (Some(_), set_len) => apply(&mut image, set_len),
            }
        }
        image
    }

    /// Counts a call and returns the fault scheduled at it, if any.
    fn call(&self, state: &mut State, op: Op) -> Result<Option<Fault>, io::Error> {
        if state.powered_off {
            return Err(os_error(EIO));
        }
        state.calls += 1;
        let call = state.calls;
        let Some(&(_, fault)) = state.schedule.iter().find(|(at, _)| *at == call) else { return Ok(None) };
        state.fired.push((call, op, fault));
        match fault {
            Fault::Fail(code) => Err(os_error(code)),
            Fault::PowerLoss => {
                state.powered_off = true;
                Err(os_error(EIO))
            }
            Fault::Tear { .. } if op != Op::Write => {
                state.powered_off = true;
                Err(os_error(EIO))
            }
            Fault::Tear { .. } => Ok(Some(fault)),
        }
    }
}

/// One open of a [`FaultFile`].
#[derive(Debug)]
pub struct FaultBackend {
    file: FaultFile,
}

impl StorageBackend for FaultBackend {
    fn len(&self) -> Result<u64, io::Error> {
        let state = self.file.lock();
        if state.powered_off {
            return Err(os_error(EIO));
        }
        Ok(state.volatile.len() as u64)
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), io::Error> {
        let mut state = self.file.lock();
        self.file.call(&mut state, Op::Read)?;
        let start = usize::try_from(offset).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let bytes = state
            .volatile
            .get(start..start + out.len())
            .ok_or_else(|| io::Error::new(io::ErrorKind::UnexpectedEof, "read past the end of the file"))?;
        out.copy_from_slice(bytes);
        Ok(())
    }

    fn set_len(&self, len: u64) -> Result<(), io::Error> {
        let mut state = self.file.lock();
        self.file.call(&mut state, Op::SetLen)?;
        let pending = Pending::SetLen(len);
        apply(&mut state.volatile, &pending);
        state.pending.push(pending);
        Ok(())
    }

    fn sync_data(&self) -> Result<(), io::Error> {
        let mut state = self.file.lock();
        self.file.call(&mut state, Op::Sync)?;
        if state.sync_lies {
            return Ok(());
        }
        let pending = std::mem::take(&mut state.pending);
        for change in &pending {
            apply(&mut state.durable, change);
        }
        Ok(())
    }

    fn write(&self, offset: u64, data: &[u8]) -> Result<(), io::Error> {
        let mut state = self.file.lock();
        let fault = self.file.call(&mut state, Op::Write)?;
        if let Some(Fault::Tear { keep }) = fault {
            let pending = Pending::Write { offset, data: data[..keep.min(data.len())].to_vec() };
            apply(&mut state.volatile, &pending);
            state.pending.push(pending);
            state.powered_off = true;
            return Err(os_error(EIO));
        }
        let pending = Pending::Write { offset, data: data.to_vec() };
        apply(&mut state.volatile, &pending);
        state.pending.push(pending);
        Ok(())
    }
}
