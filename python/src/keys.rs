//! Keys already in memory, read as a trace: a one-dimensional array of integers (a
//! NumPy array, or anything exporting the buffer protocol) read in place, without a
//! copy; or a sequence of str/bytes keys, hashed once into 8 bytes per key.
//!
//! Integers that are not hashed keys yet are hashed on a thread of their own, batch by
//! batch ([`ReadAhead`], as a trace file is decoded): hashing a key takes about as long
//! as replaying it, so on two cores the replay thread only replays (docs/PERFORMANCE.md,
//! "The Python package"). The messages are the same, in the same order, either way.
//!
//! A key means what it means in a text trace (`rbf replay keys.txt`, one key per line):
//! an integer is its decimal text, a string its UTF-8 bytes, hashed with the CLI's key
//! hasher; so an array and the file listing the same keys give the same results. With
//! `prehashed`, 64-bit integers are rbf's hashed keys themselves (as in a `.rbfs`
//! stream) and are used as they are.

use std::cell::OnceCell;
use std::ptr::NonNull;
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::Arc;

use pyo3::buffer::{Element, PyBuffer};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use rbf_data::ingest::count::DistinctEstimate;
use rbf_data::ingest::readahead::ReadAhead;
use rbf_data::ingest::sketch;
use rbf_data::ingest::{IngestSummary, MessageSource, SourceFormat};
use rbf_data::message::{KeyHasher, Message};

/// Messages between two looks at the interrupt flag.
const POLL_EVERY: usize = 1 << 16;

/// A key value of an array element type.
trait KeyValue: Copy + Send + Sync + 'static {
    fn key(self, hasher: &KeyHasher) -> u64;
    /// A 64-bit value equal for two keys exactly when their keys are (for counting
    /// distinct keys without hashing them).
    fn identity(self) -> u64;
}

/// An integer key: the hash of its decimal text, as a text trace's line holding it.
macro_rules! decimal_key {
    ($($t:ty),*) => {$(
        impl KeyValue for $t {
            #[inline]
            fn key(self, hasher: &KeyHasher) -> u64 {
                let mut buf = [0u8; 21];
                let v = i128::from(self);
                let at = decimal(v.unsigned_abs() as u64, &mut buf, v < 0);
                hasher.hash(&buf[at..])
            }
            #[inline]
            fn identity(self) -> u64 {
                // Two's complement: one-to-one within the type.
                i128::from(self) as u64
            }
        }
    )*};
}
decimal_key!(u64, i64, u32, i32, u16, i16, u8, i8);

/// A key that is rbf's 64-bit hashed key already.
#[derive(Clone, Copy)]
#[repr(transparent)]
struct Hashed(u64);

/// A 64-bit integer type, whose slices may be read as slices of [`Hashed`]
/// (repr(transparent) over u64, which has the layout of i64).
trait Word {}
impl Word for u64 {}
impl Word for i64 {}

impl KeyValue for Hashed {
    #[inline]
    fn key(self, _: &KeyHasher) -> u64 {
        self.0
    }
    #[inline]
    fn identity(self) -> u64 {
        self.0
    }
}

/// Two decimal digits of each number below 100.
const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Writes the decimal text of `v` (after a minus sign when `negative`) at the end of
/// `buf`, two digits a step (this is the hot loop of an integer array's replay);
/// returns where it starts.
#[inline]
fn decimal(mut v: u64, buf: &mut [u8; 21], negative: bool) -> usize {
    let mut at = buf.len();
    while v >= 100 {
        let r = (v % 100) as usize * 2;
        v /= 100;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&PAIRS[r..r + 2]);
    }
    if v >= 10 {
        let r = v as usize * 2;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&PAIRS[r..r + 2]);
    } else {
        at -= 1;
        buf[at] = b'0' + v as u8;
    }
    if negative {
        at -= 1;
        buf[at] = b'-';
    }
    at
}

/// The caller's keys, borrowed for the length of one call: the buffer is released when
/// this is dropped, attached to the interpreter, once every source reading it is gone.
pub struct Keys {
    storage: Storage,
    prehashed: bool,
    /// Each source reading the keys holds a clone of this sender; `gone` disconnects
    /// when the last one is dropped.
    readers: Option<SyncSender<()>>,
    gone: Receiver<()>,
}

/// The keys' memory, shared with the sources reading it (a source may end on a
/// hashing thread after the command that read it has returned).
enum Storage {
    U64(Arc<PyBuffer<u64>>),
    I64(Arc<PyBuffer<i64>>),
    U32(Arc<PyBuffer<u32>>),
    I32(Arc<PyBuffer<i32>>),
    U16(Arc<PyBuffer<u16>>),
    I16(Arc<PyBuffer<i16>>),
    U8(Arc<PyBuffer<u8>>),
    I8(Arc<PyBuffer<i8>>),
    /// str/bytes keys, hashed up front.
    Hashed(Arc<Vec<u64>>),
}

/// The keys of `obj`: an integer array (buffer protocol, one dimension, contiguous) or
/// a sequence of str/bytes.
pub fn borrow(py: Python<'_>, obj: &Bound<'_, PyAny>, prehashed: bool) -> PyResult<Keys> {
    let storage = if let Some(s) = integer_buffer(obj)? {
        s
    } else if obj.is_instance_of::<PyString>() || obj.is_instance_of::<PyBytes>() {
        return Err(PyTypeError::new_err(
            "keys: expected an array or a sequence of keys, found one string (a path is \
             given as a str naming a file, not as keys)",
        ));
    } else {
        Storage::Hashed(Arc::new(hash_objects(py, obj)?))
    };
    let wide = matches!(storage, Storage::U64(_) | Storage::I64(_));
    if prehashed && !wide {
        return Err(PyValueError::new_err(
            "prehashed: hashed keys are 64-bit integers (uint64 or int64), not text or narrower integers",
        ));
    }
    let (readers, gone) = mpsc::sync_channel(0);
    Ok(Keys {
        storage,
        prehashed,
        readers: Some(readers),
        gone,
    })
}

fn integer_buffer(obj: &Bound<'_, PyAny>) -> PyResult<Option<Storage>> {
    fn get<T: Element>(obj: &Bound<'_, PyAny>) -> Option<PyBuffer<T>> {
        PyBuffer::<T>::get(obj).ok()
    }
    // Not an exporter of the buffer protocol at all: a list, a tuple, ...
    if pyo3::buffer::PyUntypedBuffer::get(obj).is_err() {
        return Ok(None);
    }
    let s = if let Some(b) = get::<u64>(obj) {
        Storage::U64(Arc::new(check(b)?))
    } else if let Some(b) = get::<i64>(obj) {
        Storage::I64(Arc::new(check(b)?))
    } else if let Some(b) = get::<u32>(obj) {
        Storage::U32(Arc::new(check(b)?))
    } else if let Some(b) = get::<i32>(obj) {
        Storage::I32(Arc::new(check(b)?))
    } else if let Some(b) = get::<u16>(obj) {
        Storage::U16(Arc::new(check(b)?))
    } else if let Some(b) = get::<i16>(obj) {
        Storage::I16(Arc::new(check(b)?))
    } else if let Some(b) = get::<u8>(obj) {
        Storage::U8(Arc::new(check(b)?))
    } else if let Some(b) = get::<i8>(obj) {
        Storage::I8(Arc::new(check(b)?))
    } else {
        // Not integers (strings, objects, floats): read element by element.
        return Ok(None);
    };
    Ok(Some(s))
}

fn check<T: Element>(b: PyBuffer<T>) -> PyResult<PyBuffer<T>> {
    if b.dimensions() != 1 || !b.is_c_contiguous() {
        return Err(PyValueError::new_err(
            "keys: the array must be one-dimensional and contiguous (numpy.ascontiguousarray)",
        ));
    }
    Ok(b)
}

/// str/bytes keys hashed as a text trace's lines holding them would be.
fn hash_objects(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
    let hasher = KeyHasher::default();
    let mut out = Vec::with_capacity(obj.len().unwrap_or(0));
    for (i, item) in obj.try_iter()?.enumerate() {
        let item = item?;
        let key = if let Ok(s) = item.cast::<PyString>() {
            hasher.hash(s.to_str()?.as_bytes())
        } else if let Ok(b) = item.cast::<PyBytes>() {
            hasher.hash(b.as_bytes())
        } else if let Ok(v) = item.extract::<i128>() {
            if !(i128::from(i64::MIN)..=i128::from(u64::MAX)).contains(&v) {
                return Err(PyValueError::new_err(format!(
                    "keys[{i}]: {v} does not fit in 64 bits"
                )));
            }
            let mut buf = [0u8; 21];
            let at = decimal(v.unsigned_abs() as u64, &mut buf, v < 0);
            hasher.hash(&buf[at..])
        } else {
            return Err(PyTypeError::new_err(format!(
                "keys[{i}]: expected str, bytes or int, found {}",
                item.get_type().name()?
            )));
        };
        out.push(key);
        if (i + 1).is_multiple_of(POLL_EVERY) {
            py.check_signals()?;
        }
    }
    Ok(out)
}

impl Keys {
    /// The keys as a message stream. Integers that are not hashed keys yet are hashed
    /// on a thread of their own, which starts at the stream's first message.
    pub fn source(&self) -> Box<dyn MessageSource> {
        fn slice<T: Element>(b: &PyBuffer<T>) -> NonNull<[T]> {
            // `check` made sure the buffer is one contiguous run of `item_count`
            // elements of T.
            b.as_slice_ptr().unwrap_or(NonNull::from(&[][..]))
        }
        fn hashed<T: Word>(s: NonNull<[T]>) -> NonNull<[Hashed]> {
            NonNull::slice_from_raw_parts(s.cast::<Hashed>(), s.len())
        }
        let lease = self.readers.clone();
        let hash_ahead = ReadAhead::spawn;
        match &self.storage {
            Storage::U64(b) if self.prehashed => MemorySource::boxed(hashed(slice(b)), b, lease),
            Storage::I64(b) if self.prehashed => MemorySource::boxed(hashed(slice(b)), b, lease),
            Storage::U64(b) => hash_ahead(MemorySource::boxed(slice(b), b, lease)),
            Storage::I64(b) => hash_ahead(MemorySource::boxed(slice(b), b, lease)),
            Storage::U32(b) => hash_ahead(MemorySource::boxed(slice(b), b, lease)),
            Storage::I32(b) => hash_ahead(MemorySource::boxed(slice(b), b, lease)),
            Storage::U16(b) => hash_ahead(MemorySource::boxed(slice(b), b, lease)),
            Storage::I16(b) => hash_ahead(MemorySource::boxed(slice(b), b, lease)),
            Storage::U8(b) => hash_ahead(MemorySource::boxed(slice(b), b, lease)),
            Storage::I8(b) => hash_ahead(MemorySource::boxed(slice(b), b, lease)),
            Storage::Hashed(v) => {
                MemorySource::boxed(hashed(NonNull::from(v.as_slice())), v, lease)
            }
        }
    }
}

impl Drop for Keys {
    fn drop(&mut self) {
        // A source dropped early (an error, Ctrl-C) may still be ending on its hashing
        // thread, at that thread's next hand-over (microseconds; it never waits for the
        // interpreter). Waiting for it here makes this the buffers' last owner, so they
        // are released now, attached to the interpreter, before the call returns.
        self.readers = None;
        let _ = self.gone.recv();
    }
}

/// Keys in memory as a message stream.
///
/// Its fields are dropped in order: the keys' owner before the lease, so that once
/// every lease is gone, [`Keys`] holds the last reference to the memory.
struct MemorySource<T> {
    /// Points into the memory `_owner` keeps alive.
    keys: NonNull<[T]>,
    _owner: Arc<dyn Send + Sync>,
    _lease: Option<SyncSender<()>>,
    at: usize,
    hasher: KeyHasher,
    summary: IngestSummary,
    /// The distinct keys, sketched when first asked.
    distinct: OnceCell<Option<DistinctEstimate>>,
}

impl<T: KeyValue> MemorySource<T> {
    fn boxed(
        keys: NonNull<[T]>,
        owner: &Arc<impl Send + Sync + 'static>,
        lease: Option<SyncSender<()>>,
    ) -> Box<dyn MessageSource> {
        let n = keys.len() as u64;
        Box::new(MemorySource {
            keys,
            _owner: owner.clone(),
            _lease: lease,
            at: 0,
            hasher: KeyHasher::default(),
            summary: IngestSummary {
                source: format!("{n} keys in memory"),
                format: SourceFormat::Memory,
                records: n,
                messages: n,
                ..IngestSummary::default()
            },
            distinct: OnceCell::new(),
        })
    }

    #[inline]
    fn keys(&self) -> &[T] {
        // SAFETY: `keys` points into memory `_owner` keeps alive (a buffer export pins
        // the exporter's memory: NumPy refuses to resize an array while it is
        // exported); the source only reads it.
        unsafe { self.keys.as_ref() }
    }
}

impl<T: KeyValue> Iterator for MemorySource<T> {
    type Item = Message;

    #[inline]
    fn next(&mut self) -> Option<Message> {
        let k = *self.keys().get(self.at)?;
        if self.at.is_multiple_of(POLL_EVERY) && rbf_foundations::progress::interrupted() {
            return None;
        }
        self.at += 1;
        Some(Message::new(k.key(&self.hasher)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.keys.len() - self.at;
        (n, Some(n))
    }
}

// SAFETY: the source only reads the keys, which no one writes during a call, in memory
// its `_owner` keeps alive wherever the source goes.
unsafe impl<T: KeyValue> Send for MemorySource<T> {}

impl<T: KeyValue> MessageSource for MemorySource<T> {
    fn summary(&self) -> &IngestSummary {
        &self.summary
    }

    /// Sketched from every key (a pass of 1.4 ns a key), so that the
    /// replay sizes its table once instead of doubling it ([`rbf_data::ingest::sketch`]).
    fn estimated_distinct(&self) -> Option<DistinctEstimate> {
        *self.distinct.get_or_init(|| {
            let keys = &self.keys()[self.at..];
            if keys.len() < sketch::MIN_KEYS as usize {
                return None;
            }
            // Ctrl-C is looked for between chunks (10^9 keys take 1.4 s).
            let mut s = sketch::Sketch::default();
            for chunk in keys.chunks(POLL_EVERY) {
                if rbf_foundations::progress::interrupted() {
                    return None;
                }
                chunk.iter().for_each(|k| s.add(k.identity()));
            }
            s.size_for(keys.len() as u64)
        })
    }

    /// A batch in one loop (the hashing thread's work), ended early by Ctrl-C.
    fn fill(&mut self, out: &mut Vec<Message>, max: usize) {
        if rbf_foundations::progress::interrupted() {
            return;
        }
        let keys = self.keys();
        let end = keys.len().min(self.at + max.saturating_sub(out.len()));
        let hasher = &self.hasher;
        out.extend(
            keys[self.at..end]
                .iter()
                .map(|k| Message::new(k.key(hasher))),
        );
        self.at = end;
    }
}

/// A trace read from files that ends early once Ctrl-C asked the call to stop (the
/// results are then dropped and the call raises KeyboardInterrupt).
pub fn stop_on_interrupt<'a>(inner: Box<dyn MessageSource + 'a>) -> Box<dyn MessageSource + 'a> {
    Box::new(StopOnInterrupt { inner, count: 0 })
}

struct StopOnInterrupt<'a> {
    inner: Box<dyn MessageSource + 'a>,
    count: usize,
}

impl Iterator for StopOnInterrupt<'_> {
    type Item = Message;

    #[inline]
    fn next(&mut self) -> Option<Message> {
        self.count += 1;
        if self.count.is_multiple_of(POLL_EVERY) && rbf_foundations::progress::interrupted() {
            return None;
        }
        self.inner.next()
    }
}

impl MessageSource for StopOnInterrupt<'_> {
    fn summary(&self) -> &IngestSummary {
        self.inner.summary()
    }

    fn dictionary(&self) -> Option<&rbf_data::message::KeyDictionary> {
        self.inner.dictionary()
    }
}
