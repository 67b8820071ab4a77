//! perf's `-C`/`-M` list syntax: which CPUs (or memory node) each of the
//! first N tasks is bound to.
//!
//! A list is comma-separated tokens. A token is a number optionally followed
//! by modifiers, each at most once and in any order:
//!
//! * `-END`  a range from the number to END, inclusive (`5-11`);
//! * `#STEP` every STEP-th id of the range (`0-6#2` = 0,2,4,6);
//! * `_LEN`  (CPUs only) each entry is LEN consecutive CPUs starting there
//!   (`8_4-16#4` = CPUs 8-11, 12-15, 16-19 for three tasks);
//! * `xMUL`  each entry repeated MUL times (`0x4` = 0,0,0,0).
//!
//! Entries go to tasks in order; tasks beyond the list stay unbound and
//! entries beyond the tasks are ignored. perf reads each number with
//! `atol`, so it accepts junk such as `a` (CPU 0); here a token must match
//! the grammar above or it is refused.

/// What a list names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListKind {
    Cpus,
    Nodes,
}

impl ListKind {
    fn what(self) -> &'static str {
        match self {
            ListKind::Cpus => "CPU",
            ListKind::Nodes => "node",
        }
    }
}

/// One token, numbers as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token {
    pub start: usize,
    pub end: usize,
    pub step: usize,
    pub len: usize,
    pub mul: usize,
}

/// One task's binding: ids `first..first+len`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Entry {
    pub first: usize,
    pub len: usize,
}

/// The entries for the first tasks, and the id at which entries were
/// dropped for want of tasks (perf's "ignoring bind CPUs starting at").
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Expanded {
    pub entries: Vec<Entry>,
    pub ignored_from: Option<usize>,
}

/// Largest number accepted in a token.
const MAX_NUMBER: usize = 1 << 20;

/// Parses a list into tokens, checking the grammar and that each token makes
/// sense on its own (positive step, length and multiplier; ranges that do
/// not run backwards). Machine limits are checked by [`check`].
pub(crate) fn parse(text: &str, kind: ListKind) -> Result<Vec<Token>, String> {
    if text.trim().is_empty() {
        return Err("the list is empty".into());
    }
    text.split(',')
        .map(|tok| parse_token(tok.trim(), kind))
        .collect()
}

fn parse_token(tok: &str, kind: ListKind) -> Result<Token, String> {
    let bad = |why: &str| {
        let form = match kind {
            ListKind::Cpus => "N[-END][#STEP][_LEN][xMUL]",
            ListKind::Nodes => "N[-END][#STEP][xMUL]",
        };
        format!("'{tok}' is not a valid token: {why} (write {form}, e.g. 0-6#2 or 0x4)")
    };
    if tok.is_empty() {
        return Err(bad("empty token"));
    }
    let bytes = tok.as_bytes();
    let mut pos = 0;
    let number = |pos: &mut usize| -> Result<usize, String> {
        let begin = *pos;
        while *pos < bytes.len() && bytes[*pos].is_ascii_digit() {
            *pos += 1;
        }
        if begin == *pos {
            return Err(bad("a number is missing"));
        }
        tok[begin..*pos]
            .parse::<usize>()
            .ok()
            .filter(|&v| v < MAX_NUMBER)
            .ok_or_else(|| bad("number too large"))
    };
    let start = number(&mut pos)?;
    let mut t = Token {
        start,
        end: start,
        step: 1,
        len: 1,
        mul: 1,
    };
    let mut seen = Vec::new();
    while pos < bytes.len() {
        let marker = bytes[pos] as char;
        if !matches!(marker, '-' | '#' | '_' | 'x') {
            return Err(bad(&format!("unexpected '{marker}'")));
        }
        if marker == '_' && kind == ListKind::Nodes {
            return Err(bad("'_LEN' applies to CPU lists (-C) only"));
        }
        if seen.contains(&marker) {
            return Err(bad(&format!("'{marker}' given twice")));
        }
        seen.push(marker);
        pos += 1;
        let v = number(&mut pos)?;
        match marker {
            '-' => t.end = v,
            '#' => t.step = v,
            '_' => t.len = v,
            _ => t.mul = v,
        }
    }
    if t.step == 0 {
        return Err(bad("the step must be at least 1"));
    }
    if t.len == 0 {
        return Err(bad("the length must be at least 1"));
    }
    if t.mul == 0 {
        return Err(bad("the multiplier must be at least 1"));
    }
    if t.start > t.end {
        return Err(bad(&format!(
            "the range {}-{} runs backwards",
            t.start, t.end
        )));
    }
    Ok(t)
}

/// Checks tokens against the machine as perf does: the step below the
/// number of ids (`count`, CPUs or nodes), a CPU mask length of at most
/// `count`, and every id used accepted by `exists` (which returns why not).
pub(crate) fn check(
    tokens: &[Token],
    kind: ListKind,
    count: usize,
    exists: &dyn Fn(usize) -> Result<(), String>,
) -> Result<(), String> {
    let what = kind.what();
    for t in tokens {
        if t.step >= count.max(1) && t.start != t.end {
            return Err(format!(
                "step #{} must be smaller than the number of {what}s ({count})",
                t.step
            ));
        }
        if t.len > count {
            return Err(format!(
                "length _{} exceeds the number of CPUs ({count})",
                t.len
            ));
        }
        exists(t.start)?;
        exists(t.end)?;
        for id in (t.start..=t.end).step_by(t.step) {
            for cpu in id..id + t.len {
                exists(cpu)?;
            }
        }
    }
    Ok(())
}

/// Hands entries to at most `tasks` tasks, in list order.
pub(crate) fn expand(tokens: &[Token], tasks: usize) -> Expanded {
    let mut entries = Vec::new();
    for t in tokens {
        for id in (t.start..=t.end).step_by(t.step) {
            for _ in 0..t.mul {
                if entries.len() >= tasks {
                    return Expanded {
                        entries,
                        ignored_from: Some(id),
                    };
                }
                entries.push(Entry {
                    first: id,
                    len: t.len,
                });
            }
        }
    }
    Expanded {
        entries,
        ignored_from: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any -C/-M text is tokens or an error; checked tokens expand to at
        /// most one entry per task, whatever the numbers.
        #[test]
        fn any_list_is_tokens_or_an_error(
            text in "\\PC{0,24}|[0-9]{1,8}([-#_x][0-9]{1,8}){0,4}(,[0-9]{1,8}([-#_x][0-9]{1,8}){0,4}){0,3}",
            nodes in proptest::bool::ANY,
            count in 1usize..300,
            tasks in 0usize..64,
        ) {
            let kind = if nodes { ListKind::Nodes } else { ListKind::Cpus };
            if let Ok(tokens) = parse(&text, kind) {
                let exists = |id: usize| if id < count { Ok(()) } else { Err(format!("{id} is not there")) };
                if check(&tokens, kind, count, &exists).is_ok() {
                    let e = expand(&tokens, tasks);
                    prop_assert!(e.entries.len() <= tasks);
                    prop_assert!(e.entries.iter().all(|x| x.first + x.len <= count));
                }
            }
        }
    }

    fn cpus(text: &str, tasks: usize) -> Vec<(usize, usize)> {
        let toks = parse(text, ListKind::Cpus).unwrap();
        expand(&toks, tasks)
            .entries
            .iter()
            .map(|e| (e.first, e.len))
            .collect()
    }

    fn nodes(text: &str, tasks: usize) -> Vec<usize> {
        let toks = parse(text, ListKind::Nodes).unwrap();
        expand(&toks, tasks)
            .entries
            .iter()
            .map(|e| e.first)
            .collect()
    }

    #[test]
    fn single_ids_and_ranges() {
        assert_eq!(cpus("0", 4), [(0, 1)]);
        assert_eq!(cpus("0,8", 4), [(0, 1), (8, 1)]);
        assert_eq!(cpus("5-7", 4), [(5, 1), (6, 1), (7, 1)]);
        assert_eq!(nodes("1,0", 2), [1, 0]);
    }

    #[test]
    fn step_len_and_mul_as_in_the_seed() {
        // The seed's own example: --cpus 8_4-16#4 = 8_4,12_4,16_4.
        assert_eq!(cpus("8_4-16#4", 8), [(8, 4), (12, 4), (16, 4)]);
        // Modifiers may come in any order, as perf finds each with strstr.
        assert_eq!(cpus("8-16#4_4", 8), [(8, 4), (12, 4), (16, 4)]);
        assert_eq!(cpus("0-6#2", 8), [(0, 1), (2, 1), (4, 1), (6, 1)]);
        // 0x8 is short for 0,0,0,0,0,0,0,0; the suite's "-M 0x2" and "1x2".
        assert_eq!(nodes("0x2", 2), [0, 0]);
        assert_eq!(nodes("1x2", 2), [1, 1]);
        assert_eq!(cpus("0-1x2", 8), [(0, 1), (0, 1), (1, 1), (1, 1)]);
    }

    #[test]
    fn extra_entries_are_ignored_and_reported() {
        let toks = parse("0-7", ListKind::Cpus).unwrap();
        let e = expand(&toks, 3);
        assert_eq!(e.entries.len(), 3);
        assert_eq!(e.ignored_from, Some(3));
        let toks = parse("0x4", ListKind::Nodes).unwrap();
        assert_eq!(expand(&toks, 2).ignored_from, Some(0));
        assert_eq!(expand(&toks, 4).ignored_from, None);
        assert_eq!(expand(&toks, 9).entries.len(), 4);
    }

    #[test]
    fn malformed_tokens_are_refused() {
        for bad in [
            "",
            "a",
            "0,",
            ",0",
            "0-",
            "-1",
            "3-1",
            "0#0",
            "0_0",
            "0x0",
            "0--1",
            "0xx2",
            "0.5",
            "0 1",
            "0;1",
            "1-2-3",
            "99999999999",
        ] {
            assert!(parse(bad, ListKind::Cpus).is_err(), "{bad:?} accepted");
        }
        let err = parse("1_2", ListKind::Nodes).unwrap_err();
        assert!(err.contains("-C"), "{err}");
        let err = parse("3-1", ListKind::Cpus).unwrap_err();
        assert!(err.contains("backwards"), "{err}");
    }

    #[test]
    fn machine_limits() {
        let exists = |id: usize| {
            if id < 4 {
                Ok(())
            } else {
                Err(format!("CPU {id} does not exist"))
            }
        };
        let check_text = |t: &str| {
            check(
                &parse(t, ListKind::Cpus).unwrap(),
                ListKind::Cpus,
                4,
                &exists,
            )
        };
        assert!(check_text("0-3").is_ok());
        assert!(check_text("0_4").is_ok());
        assert!(check_text("0-2#2").is_ok());
        assert!(check_text("4").unwrap_err().contains("CPU 4"));
        assert!(check_text("2_3").unwrap_err().contains("CPU 4"));
        assert!(check_text("0-3#4").unwrap_err().contains("step"));
        assert!(check_text("0_5").unwrap_err().contains("length"));
    }
}
