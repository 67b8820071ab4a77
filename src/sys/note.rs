//! One line of text that forked processes hand to the parent: the first
//! failure of a run. The parent prints it as the run's one error line, so
//! several processes failing at once (a task limit refuses them all) never
//! print one line each, nor interleave their writes to stderr.

use super::Region;
use std::io;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};
use std::time::{Duration, Instant};

/// Bytes kept of a note; longer ones are cut at a character boundary.
const CAP: usize = 1024;

const FREE: u32 = 0;
const WRITING: u32 = 1;
const SET: u32 = 2;

/// A shared mapping made before the fork: the state and length as 32-bit
/// words in the first 8 bytes, the text packed 8 bytes a word after them.
pub(crate) struct Note {
    region: Region,
}

impl Note {
    pub(crate) fn new() -> io::Result<Note> {
        Ok(Note {
            region: Region::map(8 + CAP, true, 0)?,
        })
    }

    /// Keeps `text` where no note is kept yet; whether it was kept. A
    /// caller that comes second returns only once the first note is
    /// complete, so that whoever learns of either failure can read it.
    pub(crate) fn set(&self, text: &str) -> bool {
        let head = self.region.u32s(2);
        if head[0]
            .compare_exchange(FREE, WRITING, Acquire, Relaxed)
            .is_err()
        {
            // The writer may have been killed half-way: wait boundedly.
            let until = Instant::now() + Duration::from_secs(1);
            while head[0].load(Acquire) == WRITING && Instant::now() < until {
                std::thread::yield_now();
            }
            return false;
        }
        let mut end = text.len().min(CAP);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let words = &self.region.words()[1..];
        for (w, chunk) in words.iter().zip(text.as_bytes()[..end].chunks(8)) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            w.store(u64::from_le_bytes(b), Relaxed);
        }
        head[1].store(end as u32, Relaxed);
        head[0].store(SET, Release);
        true
    }

    /// The note, once one is complete.
    pub(crate) fn get(&self) -> Option<String> {
        let head = self.region.u32s(2);
        if head[0].load(Acquire) != SET {
            return None;
        }
        let len = (head[1].load(Relaxed) as usize).min(CAP);
        let bytes: Vec<u8> = self.region.words()[1..]
            .iter()
            .flat_map(|w| w.load(Relaxed).to_le_bytes())
            .take(len)
            .collect();
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_note_is_kept_whole_or_cut_at_a_character() {
        let n = Note::new().unwrap();
        assert_eq!(n.get(), None);
        assert!(n.set("cannot start thread 2 of 4 — é"));
        assert!(!n.set("second"));
        assert_eq!(n.get().as_deref(), Some("cannot start thread 2 of 4 — é"));
        let long = Note::new().unwrap();
        let text = format!("a{}", "é".repeat(CAP));
        assert!(long.set(&text));
        let kept = long.get().unwrap();
        assert!(kept.len() <= CAP && text.starts_with(&kept), "{kept}");
    }
}
