//! The chase options several commands share: access pattern, page-local
//! window and stride, and page kinds, parsed once with one wording.

use super::units::{parse_size, size_at_least};
use crate::error::usage;
use crate::kernels::pattern::Pattern;
use crate::memory::PageKind;
use crate::results::Condition;
use anyhow::Result;

/// lat_mem_rd-style strides measured for `--pattern stride` without
/// `--stride`.
pub(crate) const STRIDE_SWEEP: [usize; 7] = [64, 128, 256, 512, 1024, 2048, 4096];

/// A page-local window (`--window`), in bytes.
pub(crate) fn window(text: &str) -> Result<usize> {
    let w = parse_size(text).map_err(|e| usage(format!("--window {text}: {e}")))?;
    Pattern::PageLocal { window: w }
        .check()
        .map_err(|e| usage(format!("--window {text}: {e}")))?;
    Ok(w)
}

/// A stride (`--stride`): a plain number is bytes.
pub(crate) fn stride(text: &str) -> Result<usize> {
    let s = parse_size(text).map_err(|e| usage(format!("--stride {text}: {e}")))?;
    Pattern::Stride { stride: s }
        .check()
        .map_err(|e| usage(format!("--stride {text}: {e}")))?;
    Ok(s)
}

/// The patterns named by `--pattern` (each kind once), the stride kind
/// expanded over `strides` (or [`STRIDE_SWEEP`] where none is given).
pub(crate) fn patterns(
    kinds: &[String],
    window_text: &str,
    strides: &[String],
) -> Result<Vec<Pattern>> {
    let w = window(window_text)?;
    let mut ss = Vec::new();
    for s in strides {
        ss.push(stride(s)?);
    }
    let mut out = Vec::new();
    for k in kinds {
        let k = k.trim();
        if k == Pattern::STRIDE {
            let list = if ss.is_empty() {
                STRIDE_SWEEP.to_vec()
            } else {
                ss.clone()
            };
            out.extend(list.into_iter().map(|stride| Pattern::Stride { stride }));
            continue;
        }
        let p = Pattern::from_parts(k, w, 64).map_err(|e| usage(format!("--pattern {e}")))?;
        if !out.contains(&p) {
            out.push(p);
        }
    }
    if !ss.is_empty() && !out.iter().any(|p| p.kind() == Pattern::STRIDE) {
        return Err(usage(format!(
            "--stride {}: strides apply to --pattern stride, which is not asked for: add --pattern stride or leave --stride out",
            strides.join(",")
        )));
    }
    Ok(out)
}

/// One pattern (`--pattern` of sweep, matrix and mlp): a stride pattern
/// takes one `--stride`, `default_stride` without one (what the command's
/// help says: 64 for sweep and matrix, 256 for mlp).
pub(crate) fn one_pattern(
    kind: &str,
    window_text: &str,
    stride_text: Option<&str>,
    default_stride: usize,
) -> Result<Pattern> {
    let w = window(window_text)?;
    let s = stride_text.map(stride).transpose()?;
    if s.is_some() && kind.trim() != Pattern::STRIDE {
        return Err(usage(format!(
            "--stride applies to --pattern stride, not --pattern {kind}: leave --stride out"
        )));
    }
    Pattern::from_parts(kind.trim(), w, s.unwrap_or(default_stride))
        .map_err(|e| usage(format!("--pattern {e}")))
}

/// A page-local window or a stride that the buffer holds: a window larger
/// than the buffer would be a full-random chase under another name, and a
/// stride as large as the buffer a chase of one element.
pub(crate) fn fits(pattern: &Pattern, size: usize) -> Result<()> {
    let shown = crate::units::short_size(size as u64);
    if let Some(w) = pattern.window()
        && w > size
    {
        return Err(usage(format!(
            "--window {}: larger than the buffer (--size {shown}); give a window up to the buffer's size",
            crate::units::short_size(w as u64)
        )));
    }
    if let Some(s) = pattern.stride()
        && s > size / 2
    {
        return Err(usage(format!(
            "--stride {}: a chase needs at least two elements in the buffer (--size {shown}); give a stride up to half the buffer",
            crate::units::short_size(s as u64)
        )));
    }
    Ok(())
}

/// Page kinds (`--pages`): base, thp, auto, hugetlb or hugetlb:SIZE.
pub(crate) fn pages(kinds: &[String]) -> Result<Vec<PageKind>> {
    let mut out = Vec::new();
    for k in kinds {
        let p = page_kind(k, "--pages")?;
        if !out.contains(&p) {
            out.push(p);
        }
    }
    Ok(out)
}

/// One page kind, given with `flag`.
pub(crate) fn page_kind(text: &str, flag: &str) -> Result<PageKind> {
    text.parse().map_err(|e| usage(format!("{flag} {e}")))
}

/// A chase buffer size (`--size`): at least 1 MiB.
/// The chase buffer of `latency` and `mlp` without `--size`.
pub(crate) const DEFAULT_BUFFER: usize = 1 << 30;

/// `--size` as given, or [`DEFAULT_BUFFER`] until the memory nodes are
/// known ([`default_buffer`] then fits it to them).
pub(crate) fn buffer_or_default(text: &Option<String>) -> Result<usize> {
    text.as_deref().map_or(Ok(DEFAULT_BUFFER), buffer_size)
}

/// A note that a buffer was scaled down, with its condition where the
/// memory limit is what was short.
pub(crate) type Scaled = (String, Option<Condition>);

/// [`DEFAULT_BUFFER`], or half of what the least roomy of `mem_nodes` (or
/// the process's memory cgroup or ulimit) leaves where that is less, with
/// a note saying so (and its condition where the memory limit is what was
/// short). A size the user gives is measured as given instead, or refused.
pub(crate) fn default_buffer(
    topo: &crate::topology::Topology,
    mem_nodes: &[usize],
) -> Result<(usize, Option<Scaled>)> {
    use crate::probes::sizing::{cap, limit_condition};
    let (size, note, m) = mem_nodes
        .iter()
        .map(|&m| {
            let (size, note) = cap(topo, DEFAULT_BUFFER, m);
            (size, note, m)
        })
        .min_by_key(|(size, _, _)| *size)
        .unwrap_or((DEFAULT_BUFFER, None, 0));
    let size = size >> 20 << 20;
    if size < 1 << 20 {
        return Err(usage(
            "no memory node has room for a chase buffer of 1 MiB (the least --size); free some memory or raise the memory limit",
        ));
    }
    let note = note.map(|n| {
        let limit = limit_condition(topo, m);
        (n.replace("working set", "chase buffer"), limit)
    });
    Ok((size, note))
}

/// How an admission message names the buffer size.
pub(crate) fn size_shown(text: &Option<String>, size: usize) -> String {
    match text {
        Some(t) => format!("--size {t}"),
        None => format!(
            "the default --size {}",
            crate::units::short_size(size as u64)
        ),
    }
}

pub(crate) fn buffer_size(text: &str) -> Result<usize> {
    size_at_least(text, 1 << 20).map_err(|e| usage(format!("--size {text}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn patterns_expand_strides_and_refuse_what_would_be_ignored() {
        let p = patterns(
            &v(&["full-random", "page-local", "full-random"]),
            "256K",
            &[],
        )
        .unwrap();
        assert_eq!(
            p,
            vec![
                Pattern::FullRandom,
                Pattern::PageLocal { window: 256 << 10 }
            ]
        );
        let s = patterns(&v(&["stride"]), "256K", &[]).unwrap();
        assert_eq!(s.len(), STRIDE_SWEEP.len());
        let s = patterns(&v(&["stride"]), "256K", &v(&["128", "1K"])).unwrap();
        assert_eq!(
            s,
            vec![
                Pattern::Stride { stride: 128 },
                Pattern::Stride { stride: 1024 }
            ]
        );
        for (kinds, window, strides, says) in [
            (v(&["random"]), "256K", v(&[]), "not a pattern"),
            (v(&["page-local"]), "100", v(&[]), "--window 100"),
            (
                v(&["full-random"]),
                "256K",
                v(&["64"]),
                "--stride 64: strides apply",
            ),
            (v(&["stride"]), "256K", v(&["12"]), "--stride 12"),
        ] {
            let e = patterns(&kinds, window, &strides).unwrap_err();
            assert_eq!(crate::error::exit_code(&e), crate::error::EXIT_USAGE);
            assert!(e.to_string().contains(says), "{e}");
        }
        assert!(one_pattern("page-local", "256K", Some("64"), 64).is_err());
        assert_eq!(
            one_pattern("stride", "256K", Some("256"), 64).unwrap(),
            Pattern::Stride { stride: 256 }
        );
        assert!(
            pages(&v(&["thp", "huge"]))
                .unwrap_err()
                .to_string()
                .contains("--pages")
        );
    }
}
