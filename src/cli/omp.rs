//! The OpenMP variables sc-membench documents for its bandwidth threads,
//! read for `sweep`: OMP_NUM_THREADS (the thread count when -p is not
//! given), OMP_PROC_BIND=spread|close and OMP_PLACES=threads|cores|sockets
//! (where the threads go, by OpenMP's rules). A value numabench cannot
//! follow is refused rather than ignored.

use crate::error::usage;
use crate::probes::seats::{Bind, Places, Placing};
use anyhow::Result;

/// What the variables ask for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct OmpEnv {
    /// OMP_NUM_THREADS.
    pub threads: Option<usize>,
    pub placing: Placing,
    /// The variables that were followed, `NAME=value`, for the output.
    pub given: Vec<String>,
}

/// The first level of a variable's list (OpenMP allows one per nesting
/// level; sweep's threads are one level), trimmed; `None` when unset or
/// empty.
fn first_level(value: Option<String>) -> Option<String> {
    let v = value?;
    let first = v.split(',').next().unwrap_or("").trim().to_string();
    (!first.is_empty()).then_some(first)
}

fn shown(name: &str, value: &str) -> String {
    format!("{name}={}", crate::text::escape(value))
}

/// The value of `choices` that `value` names (in any case), noted in
/// `given`; else a one-line refusal saying `why`.
fn named<T: Copy>(
    name: &str,
    value: &str,
    choices: &[(&str, T)],
    why: &str,
    given: &mut Vec<String>,
) -> Result<T> {
    let lower = value.to_ascii_lowercase();
    let found = choices.iter().find(|(n, _)| *n == lower).map(|(_, t)| *t);
    let t = found.ok_or_else(|| usage(format!("{}: {why}", shown(name, value))))?;
    given.push(shown(name, value));
    Ok(t)
}

/// Reads the variables through `get` (the environment, or a test's).
pub(super) fn read(get: &dyn Fn(&str) -> Option<String>) -> Result<OmpEnv> {
    let mut env = OmpEnv::default();
    if let Some(v) = first_level(get("OMP_NUM_THREADS")) {
        let n: usize = v.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
            usage(format!(
                "{}: not a thread count; give a whole number from 1 (sweep takes it as the bandwidth threads when --threads is not given)",
                shown("OMP_NUM_THREADS", &v)
            ))
        })?;
        env.threads = Some(n);
        env.given.push(shown("OMP_NUM_THREADS", &v));
    }
    let bind = match first_level(get("OMP_PROC_BIND")) {
        None => None,
        Some(v) => Some(named(
            "OMP_PROC_BIND",
            &v,
            &[
                ("spread", Bind::Spread),
                ("true", Bind::Spread),
                ("close", Bind::Close),
            ],
            "sweep pins each bandwidth thread to its own CPU and checks its memory there; give spread or close",
            &mut env.given,
        )?),
    };
    // A place list has commas of its own: the whole value is one name.
    let places = match get("OMP_PLACES").map(|v| v.trim().to_string()) {
        Some(v) if !v.is_empty() => Some(named(
            "OMP_PLACES",
            &v,
            &[
                ("threads", Places::Threads),
                ("cores", Places::Cores),
                ("sockets", Places::Sockets),
            ],
            "sweep takes the place names threads, cores or sockets",
            &mut env.given,
        )?),
        _ => None,
    };
    if bind.is_some() || places.is_some() {
        env.placing = Placing::Omp {
            // sc-membench's parallel regions ask for spread.
            bind: bind.unwrap_or(Bind::Spread),
            places: places.unwrap_or(Places::Cores),
        };
    }
    Ok(env)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(vars: &[(&str, &str)]) -> Result<OmpEnv> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        read(&move |k: &str| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
    }

    #[test]
    fn unset_is_numabench_own_placement() {
        assert_eq!(with(&[]).unwrap(), OmpEnv::default());
        assert_eq!(with(&[("OMP_NUM_THREADS", " ")]).unwrap().threads, None);
    }

    #[test]
    fn values_sc_membench_documents_are_followed() {
        let e = with(&[
            ("OMP_NUM_THREADS", "8"),
            ("OMP_PROC_BIND", "CLOSE"),
            ("OMP_PLACES", "cores"),
        ])
        .unwrap();
        assert_eq!(e.threads, Some(8));
        assert_eq!(
            e.placing,
            Placing::Omp {
                bind: Bind::Close,
                places: Places::Cores
            }
        );
        assert_eq!(
            e.given,
            [
                "OMP_NUM_THREADS=8",
                "OMP_PROC_BIND=CLOSE",
                "OMP_PLACES=cores"
            ]
        );
        // A list per nesting level: the first is sweep's.
        let e = with(&[
            ("OMP_NUM_THREADS", "4,2"),
            ("OMP_PROC_BIND", "spread,close"),
        ])
        .unwrap();
        assert_eq!(e.threads, Some(4));
        assert_eq!(
            e.placing,
            Placing::Omp {
                bind: Bind::Spread,
                places: Places::Cores
            }
        );
        // Places alone: spread over them, as sc-membench's regions ask.
        let e = with(&[("OMP_PLACES", "threads")]).unwrap();
        assert_eq!(
            e.placing,
            Placing::Omp {
                bind: Bind::Spread,
                places: Places::Threads
            }
        );
    }

    #[test]
    fn other_values_are_one_line_errors() {
        for (k, v, says) in [
            ("OMP_NUM_THREADS", "0", "not a thread count"),
            ("OMP_NUM_THREADS", "many", "not a thread count"),
            ("OMP_PROC_BIND", "false", "give spread or close"),
            ("OMP_PROC_BIND", "master", "give spread or close"),
            ("OMP_PLACES", "{0:4}", "threads, cores or sockets"),
            ("OMP_PLACES", "cores(2)", "threads, cores or sockets"),
            ("OMP_PLACES", "x\u{1b}[31m", "threads, cores or sockets"),
        ] {
            let e = with(&[(k, v)]).unwrap_err().to_string();
            assert!(e.starts_with(&format!("{k}=")) && e.contains(says), "{e}");
            assert!(!e.contains('\n') && !e.contains('\u{1b}'), "{e}");
        }
    }
}
