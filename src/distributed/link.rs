//! The selection code's view of a communicator: every exchange counted as traffic, and every
//! message carrying a status so that a rank's failure reaches every rank without a hang.
//!
//! The protocol is the root's: ranks send up (a reduction, a gather, or a message up the merge
//! tree), the root decides and sends down (a broadcast). Every message up says whether its
//! rank (or a rank it heard from) failed; the next broadcast then tells every rank to stop, and
//! one more exchange, never counted, gives every rank the failing rank's error.

use crate::error::{Error, Result};
use crate::select::host::zip_chunks;

use super::communicator::{Communicator, ReduceOp};
use super::traffic::{Flow, Phase, Traffic};

/// The header of a broadcast.
const CONTINUE: u64 = 0;
/// The root's own error follows, encoded.
const ROOT_ERROR: u64 = 1;
/// A rank failed: the failure exchange follows.
const RANK_FAILURE: u64 = 2;

/// Bytes of a status word.
const WORD: u64 = 8;

/// A communicator with traffic accounting and failure propagation.
pub(crate) struct Link<'c> {
    comm: &'c dyn Communicator,
    traffic: Traffic,
    /// This rank's own failure, kept until the failure exchange.
    own_failure: Option<Error>,
    /// Whether this rank has heard of a failure (its own included) since it started.
    failing: bool,
}

impl<'c> Link<'c> {
    pub(crate) fn new(comm: &'c dyn Communicator) -> Self {
        Link {
            comm,
            traffic: Traffic::default(),
            own_failure: None,
            failing: false,
        }
    }

    pub(crate) fn rank(&self) -> usize {
        self.comm.rank()
    }

    pub(crate) fn size(&self) -> usize {
        self.comm.size()
    }

    pub(crate) fn is_root(&self) -> bool {
        self.comm.rank() == 0
    }

    /// What this rank sent so far.
    pub(crate) fn traffic(&self) -> Traffic {
        self.traffic
    }

    fn record(&mut self, phase: Phase, messages: u64, values: u64, bytes: u64) {
        self.traffic.record(
            phase,
            Flow {
                messages,
                values,
                bytes,
            },
        );
    }

    /// Takes a local step's outcome: its value, or `None` after keeping its error for the
    /// failure exchange.
    pub(crate) fn local<T>(&mut self, outcome: Result<T>) -> Option<T> {
        match outcome {
            Ok(v) => Some(v),
            Err(e) => {
                self.own_failure.get_or_insert(e);
                self.failing = true;
                None
            }
        }
    }

    /// Reduces this rank's `len` values toward the root by `op` (zeros when `values` is
    /// `None`, the local step having failed). The root gets the combined values, or `None`
    /// when some rank failed; the other ranks get `None`.
    pub(crate) fn up(
        &mut self,
        phase: Phase,
        values: Option<Vec<u64>>,
        len: usize,
        op: ReduceOp,
    ) -> Result<Option<Vec<u64>>> {
        let mut words = vec![0u64; len + 1];
        match values {
            Some(v) if !self.failing => {
                debug_assert_eq!(v.len(), len);
                words[1..].copy_from_slice(&v);
            }
            _ => self.failing = true,
        }
        words[0] = self.failing as u64;
        self.comm.reduce(&mut words, op)?;
        if !self.is_root() {
            self.record(phase, 1, len as u64, (len as u64 + 1) * WORD);
            return Ok(None);
        }
        if words[0] != 0 {
            self.failing = true;
            return Ok(None);
        }
        words.remove(0);
        Ok(Some(words))
    }

    /// Gathers every rank's bytes at the root (`values` is the number of values they hold,
    /// for the accounting; `None` when the local step failed). The root gets every rank's
    /// bytes in rank order, or `None` when some rank failed; the other ranks get `None`.
    pub(crate) fn gather(
        &mut self,
        phase: Phase,
        bytes: Option<Vec<u8>>,
        values: u64,
    ) -> Result<Option<Vec<Vec<u8>>>> {
        let message = self.message(bytes);
        let heard = self.comm.gather(&message)?;
        if !self.is_root() {
            self.record(phase, 1, values, message.len() as u64);
            return Ok(None);
        }
        let all: Vec<Vec<u8>> = heard
            .into_iter()
            .map(|m| self.opened(m).unwrap_or_default())
            .collect();
        Ok((!self.failing).then_some(all))
    }

    /// A message up: this rank's status byte (failing or not, `None` counting as a failure),
    /// then its bytes unless it fails.
    fn message(&mut self, bytes: Option<Vec<u8>>) -> Vec<u8> {
        if bytes.is_none() {
            self.failing = true;
        }
        let mut message = Vec::with_capacity(1 + bytes.as_ref().map_or(0, Vec::len));
        message.push(self.failing as u8);
        if let (false, Some(b)) = (self.failing, &bytes) {
            message.extend_from_slice(b);
        }
        message
    }

    /// The bytes of a message up ([`Link::message`]), or `None` when its sender (or a rank
    /// before it) failed.
    fn opened(&mut self, mut message: Vec<u8>) -> Option<Vec<u8>> {
        if message.first() != Some(&0) {
            self.failing = true;
            return None;
        }
        message.remove(0);
        Some(message)
    }

    /// Sends bytes to rank `to`, with this rank's status (`None`: the local step failed).
    pub(crate) fn send(
        &mut self,
        phase: Phase,
        to: usize,
        bytes: Option<Vec<u8>>,
        values: u64,
    ) -> Result<()> {
        let message = self.message(bytes);
        self.comm.send(to, &message)?;
        self.record(phase, 1, values, message.len() as u64);
        Ok(())
    }

    /// Receives what rank `from` sent with [`Link::send`]: its bytes, or `None` when it (or a
    /// rank before it) failed.
    pub(crate) fn receive(&mut self, from: usize) -> Result<Option<Vec<u8>>> {
        let message = self.comm.receive(from)?;
        Ok(self.opened(message))
    }

    /// The root's decision, given to every rank: the root's payload, or an error on every rank
    /// when the root's decision is an error or some rank failed. `decision` is read at the
    /// root only.
    pub(crate) fn down(&mut self, phase: Phase, decision: Result<Vec<u64>>) -> Result<Vec<u64>> {
        let mut root_error = None;
        let mut words = Vec::new();
        if self.is_root() {
            words = match decision {
                _ if self.failing => vec![RANK_FAILURE],
                Ok(payload) => {
                    let peers = self.size() as u64 - 1;
                    let len = payload.len() as u64;
                    self.record(phase, peers, peers * len, peers * (len + 1) * WORD);
                    std::iter::once(CONTINUE).chain(payload).collect()
                }
                Err(e) => {
                    let mut w = vec![ROOT_ERROR];
                    w.extend(encode_error(&e));
                    root_error = Some(e);
                    w
                }
            };
        }
        self.comm.broadcast(&mut words)?;
        match words.first().copied() {
            Some(CONTINUE) => {
                words.remove(0);
                Ok(words)
            }
            Some(ROOT_ERROR) => Err(root_error.unwrap_or_else(|| decode_error(&words[1..]))),
            Some(RANK_FAILURE) => Err(self.failure_exchange()?),
            _ => Err(Error::Communication(
                "a broadcast from the root arrived without its header".into(),
            )),
        }
    }

    /// After a failure: the lowest failing rank's message, given to every rank. The failing
    /// ranks get their own error back. Not counted as traffic.
    fn failure_exchange(&mut self) -> Result<Error> {
        let own = self.own_failure.take();
        let mine = own
            .as_ref()
            .map(|e| e.to_string().into_bytes())
            .unwrap_or_default();
        let mut words = Vec::new();
        if self.is_root() {
            let mut first = own.as_ref().map(|_| (0, mine));
            for from in 1..self.size() {
                let message = self.comm.receive(from)?;
                if first.is_none() && message.first() == Some(&1) {
                    first = Some((from, message[1..].to_vec()));
                }
            }
            let (rank, text) = first.unwrap_or((0, b"unknown failure".to_vec()));
            words.push(rank as u64);
            words.extend(bytes_to_words(&text));
        } else {
            let mut message = vec![own.is_some() as u8];
            message.extend_from_slice(&mine);
            self.comm.send(0, &message)?;
        }
        self.comm.broadcast(&mut words)?;
        Ok(match own {
            Some(e) => e,
            None => Error::RankFailed {
                rank: words.first().copied().unwrap_or(0) as usize,
                message: String::from_utf8_lossy(&words_to_bytes(&words[1..])).into_owned(),
            },
        })
    }
}

/// Bytes packed into words: the length, then the bytes in little-endian words (a long
/// message, a whole part of the data, in parallel pieces).
pub(crate) fn bytes_to_words(bytes: &[u8]) -> Vec<u64> {
    let mut words = vec![0u64; 1 + bytes.len().div_ceil(8)];
    words[0] = bytes.len() as u64;
    zip_chunks(&mut words[1..], 1, bytes, 8, |w, b| {
        for (w, c) in w.iter_mut().zip(b.chunks(8)) {
            let mut le = [0u8; 8];
            le[..c.len()].copy_from_slice(c);
            *w = u64::from_le_bytes(le);
        }
    });
    words
}

/// The inverse of [`bytes_to_words`] (empty for malformed words).
pub(crate) fn words_to_bytes(words: &[u64]) -> Vec<u8> {
    let Some((&len, rest)) = words.split_first() else {
        return Vec::new();
    };
    let mut bytes = vec![0u8; 8 * rest.len()];
    zip_chunks(&mut bytes, 8, rest, 1, |b, w| {
        for (c, w) in b.chunks_exact_mut(8).zip(w) {
            c.copy_from_slice(&w.to_le_bytes());
        }
    });
    bytes.truncate(len as usize);
    bytes
}

/// The errors the root decides on, as words for the other ranks.
fn encode_error(e: &Error) -> Vec<u64> {
    match e {
        Error::EmptyInput => vec![1],
        Error::RankOutOfRange { k, n } => vec![2, *k as u64, *n as u64],
        Error::NanInInput { count, first_index } => vec![3, *count as u64, *first_index as u64],
        Error::InvalidProbability { q } => vec![4, q.to_bits()],
        Error::InvalidArgument(m) => std::iter::once(5)
            .chain(bytes_to_words(m.as_bytes()))
            .collect(),
        other => std::iter::once(6)
            .chain(bytes_to_words(other.to_string().as_bytes()))
            .collect(),
    }
}

/// The inverse of [`encode_error`].
fn decode_error(words: &[u64]) -> Error {
    let text = |w: &[u64]| String::from_utf8_lossy(&words_to_bytes(w)).into_owned();
    let at = |i: usize| words.get(i).copied().unwrap_or(0);
    match at(0) {
        1 => Error::EmptyInput,
        2 => Error::RankOutOfRange {
            k: at(1) as usize,
            n: at(2) as usize,
        },
        3 => Error::NanInInput {
            count: at(1) as usize,
            first_index: at(2) as usize,
        },
        4 => Error::InvalidProbability {
            q: f64::from_bits(at(1)),
        },
        5 => Error::InvalidArgument(text(&words[1..])),
        _ => Error::RankFailed {
            rank: 0,
            message: text(words.get(1..).unwrap_or(&[])),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip_through_words() {
        for text in ["", "a", "12345678", "123456789", "rank 3: no such file"] {
            assert_eq!(
                words_to_bytes(&bytes_to_words(text.as_bytes())),
                text.as_bytes()
            );
        }
        // Long enough to be converted in parallel pieces, with a partial last word.
        let long: Vec<u8> = (0..3_000_003u32).map(|i| (i * 131 + 7) as u8).collect();
        let words = bytes_to_words(&long);
        assert_eq!(words[1], u64::from_le_bytes(long[..8].try_into().unwrap()));
        assert_eq!(words_to_bytes(&words), long);
        let keys: Vec<u32> = (0..1_000_001u32)
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        let bytes = super::super::shard::keys_to_bytes(&keys);
        assert_eq!(bytes[4..8], keys[1].to_le_bytes());
        assert_eq!(super::super::shard::bytes_to_keys::<u32>(&bytes), keys);
    }

    #[test]
    fn root_errors_round_trip() {
        let errors = [
            Error::EmptyInput,
            Error::RankOutOfRange { k: 9, n: 3 },
            Error::NanInInput {
                count: 2,
                first_index: 77,
            },
            Error::InvalidProbability { q: 1.5 },
            Error::InvalidArgument("no ranks".into()),
        ];
        for e in errors {
            assert_eq!(decode_error(&encode_error(&e)).to_string(), e.to_string());
        }
        let other = decode_error(&encode_error(&Error::CudaUnavailable("x".into())));
        assert!(matches!(other, Error::RankFailed { rank: 0, .. }));
    }
}
