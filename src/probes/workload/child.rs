//! A forked process of a run: it binds itself as its first thread will be,
//! maps its process memory, runs its threads and tells the parent how they
//! ended through the control block.

use super::layout::{AllocSpec, AreaId, Control, DataArea, Word};
use super::lfsr::{mix, task_val};
use super::params::Params;
use super::worker::{self, TaskCtx};
use crate::ids::CpuSet;
use crate::sys;
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::Ordering::Release;

/// Writes out what stdout and stderr hold, before a fork would copy it
/// into the child.
pub(super) fn flush() {
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
}

/// Tells the parent that this process's task `what` failed and why: the
/// parent prints the first failure as the run's one error line.
fn report(control: &Control, what: &str) {
    control.note().set(what);
    control.word(Word::Failed).fetch_add(1, Release);
    control.request_stop();
    for w in [Word::Started, Word::Working, Word::Done] {
        sys::futex_wake_all(control.word(w));
    }
}

/// The body of forked process `i`; never returns.
pub(super) fn child_main(
    i: usize,
    p: &Params,
    control: &Control,
    global: Option<&sys::Region>,
    alloc: &AllocSpec,
    all_cpus: &CpuSet,
    parent: libc::pid_t,
) -> ! {
    let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        process_body(i, p, control, global, alloc, all_cpus, parent)
    }))
    .unwrap_or_else(|_| {
        report(control, &format!("process {i}: panicked"));
        101
    });
    flush();
    sys::exit_now(code)
}

fn process_body(
    i: usize,
    p: &Params,
    control: &Control,
    global: Option<&sys::Region>,
    alloc: &AllocSpec,
    all_cpus: &CpuSet,
    parent: libc::pid_t,
) -> i32 {
    crate::interrupt::child_signal_setup();
    if sys::die_with_parent().is_err() || sys::parent_pid() != parent {
        // The parent is already gone: nobody would reap or stop us.
        return 1;
    }
    sys::set_task_name(&format!("process {i}"));
    // Memory and CPUs as the process's first thread will have them, so the
    // process memory is initialised there (perf does the same).
    let first = i * p.nr_threads;
    if let Err(e) = worker::bind_task(p, first, all_cpus) {
        report(control, &format!("process {i}: {e}"));
        return 1;
    }
    let mut refused = None;
    let area = match DataArea::alloc(
        p.bytes_process,
        false,
        alloc,
        mix(1 << 32 | i as u64) & 0x7FFF_FFFF,
        &mut refused,
    ) {
        Ok(a) => a,
        Err(e) => {
            report(control, &format!("process {i}: process memory (-P): {e}"));
            return 1;
        }
    };
    worker::warn_thp(control, refused);
    let process = area.as_ref().map(DataArea::region);
    if p.show_details >= 3 {
        crate::console::out(&format!(
            " # process {i:2} global mem: {:#x}, process mem: {:#x}\n",
            global.map_or(0, sys::Region::addr),
            process.map_or(0, sys::Region::addr)
        ));
    }
    let failed = run_threads(i, p, control, global, process, alloc, all_cpus);
    if let Some(a) = &area {
        control.store_placement(AreaId::Process(i), &a.placement());
    }
    i32::from(failed)
}

/// Process `i`'s threads, one task each, run to their end; whether any
/// failed (each failure is reported to the parent).
fn run_threads(
    i: usize,
    p: &Params,
    control: &Control,
    global: Option<&sys::Region>,
    process: Option<&sys::Region>,
    alloc: &AllocSpec,
    all_cpus: &CpuSet,
) -> bool {
    let first = i * p.nr_threads;
    let lock = Mutex::new(());
    let mut failed = false;
    std::thread::scope(|s| {
        let mut handles = Vec::new();
        for t in 0..p.nr_threads {
            let task_nr = first + t;
            let ctx = TaskCtx {
                params: p,
                control,
                global,
                process,
                process_lock: &lock,
                process_nr: i,
                thread_nr: t,
                task_nr,
                alloc,
                all_cpus,
                val0: task_val(task_nr),
            };
            let started = sys::threads::spawn_scoped(s, (task_nr, p.nr_tasks), move || {
                worker::run_task(&ctx)
            });
            match started {
                Ok(h) => handles.push((t, h)),
                Err(e) => {
                    report(control, &e.to_string());
                    failed = true;
                    break;
                }
            }
        }
        for (t, h) in handles {
            match h.join() {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    report(control, &format!("task {i}/{t}: {e}"));
                    failed = true;
                }
                Err(_) => {
                    report(control, &format!("task {i}/{t}: panicked"));
                    failed = true;
                }
            }
        }
    });
    failed
}
