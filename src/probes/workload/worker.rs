//! The work of one task: perf's `do_work` over each of its memory areas,
//! loop after loop, and the loop itself (`worker_thread`): startup barrier,
//! stop and time checks, CPU reporting, perturbation.

use super::layout::{AllocSpec, AreaId, Control, DataArea, ThpRefused, Word};
use super::lfsr::lfsr_32;
use super::params::Params;
use super::sweep::{Access, access};
use crate::ids::{CpuSet, NodeSet};
use crate::placement::MemPolicy;
use crate::sys::{self, Region};
use std::io::Write;
use std::sync::Mutex;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

/// The first word a task starts from: tasks spread over the area by their
/// number, loops shifted by the loop number (perf's `chunk_0`/`chunk_1`).
pub(crate) fn start_offset(words: u64, nr: u64, nr_max: u64, lp: u32, nr_loops: u32) -> u64 {
    let chunk_0 = words / nr_max.max(1);
    let chunk_1 = words / u64::from(nr_loops.max(1));
    (nr * chunk_0 + u64::from(lp) * chunk_1) % words
}

/// perf's `do_work` on the first `bytes` of `area` for task `nr` of
/// `nr_max` sharing it, in loop `lp`. Returns `val` after the accesses (the
/// caller adds it to its own `val`, as perf does, also when there is no
/// area).
pub(crate) fn do_work(
    area: Option<&Region>,
    bytes: u64,
    nr: u64,
    nr_max: u64,
    lp: u32,
    mut val: u64,
    a: &Access,
) -> u64 {
    let Some(region) = area else { return val };
    let words = (bytes / 8).min(region.len() as u64 / 8);
    if words == 0 {
        return val;
    }
    // Plain memset of the whole area.
    if a.memset && !a.rand_walk {
        region.zero(0, words as usize);
        return val;
    }
    let data = &region.words()[..words as usize];
    if a.rand_walk {
        // 8 KiB chunks at random offsets, as many as fit in the area.
        let mut lfsr = nr.wrapping_add(u64::from(lp)).wrapping_add(val) as u32;
        for _ in 0..words / 1024 {
            lfsr = lfsr_32(lfsr);
            let start = u64::from(lfsr) % words;
            let end = (start + 1024).min(words - 1);
            if end <= start {
                continue;
            }
            if a.memset {
                region.zero(start as usize, (end - start) as usize);
            } else {
                val = access(&data[start as usize..end as usize], val, a, false);
            }
        }
        return val;
    }
    let off = start_offset(words, nr, nr_max, lp, a.nr_loops) as usize;
    if !a.backwards || (nr + u64::from(lp)) & 1 == 1 {
        // Forwards from the word after `off`, wrapping, up to `off`.
        val = access(&data[off + 1..], val, a, false);
        access(&data[..off], val, a, false)
    } else {
        // Backwards from the word before `off`, wrapping, down to `off`.
        val = access(&data[..off], val, a, true);
        access(&data[off + 1..], val, a, true)
    }
}

/// Everything one task needs.
pub(crate) struct TaskCtx<'a> {
    pub params: &'a Params,
    pub control: &'a Control,
    pub global: Option<&'a Region>,
    pub process: Option<&'a Region>,
    pub process_lock: &'a Mutex<()>,
    pub process_nr: usize,
    pub thread_nr: usize,
    pub task_nr: usize,
    pub alloc: &'a AllocSpec,
    /// CPUs an unbound task may use: the process's allowed CPUs.
    pub all_cpus: &'a CpuSet,
    pub val0: u64,
}

/// Prints perf's THP warning once per run, across processes.
pub(crate) fn warn_thp(control: &Control, refused: Option<ThpRefused>) {
    let Some(r) = refused else { return };
    if control
        .word(Word::ThpWarned)
        .compare_exchange(0, 1, Relaxed, Relaxed)
        .is_err()
    {
        return;
    }
    let text = match r {
        ThpRefused::Enable => {
            "WARNING: Could not enable THP - do: 'echo madvise > /sys/kernel/mm/transparent_hugepage/enabled'"
        }
        ThpRefused::Disable => {
            "WARNING: Could not disable THP: run a CONFIG_TRANSPARENT_HUGEPAGE kernel?"
        }
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
    let _ = out.flush();
}

/// Binds the calling thread as task `task` asks: its CPUs (or all allowed
/// CPUs), and its memory node when it has one (else the policy inherited
/// from the thread that created it stays, as in perf).
pub(crate) fn bind_task(p: &Params, task: usize, all_cpus: &CpuSet) -> Result<(), String> {
    let cpus = p.cpu_bind[task].as_ref().unwrap_or(all_cpus);
    crate::placement::pin_current_thread(cpus).map_err(|e| e.to_string())?;
    if let Some(node) = p.node_bind[task] {
        crate::placement::set_thread_policy(&MemPolicy::Bind(NodeSet::from_ids([node])))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn print_line(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
    let _ = out.flush();
}

/// One task from binding to its last loop (perf's `worker_thread`).
pub(crate) fn run_task(ctx: &TaskCtx) -> Result<(), String> {
    let p = ctx.params;
    let c = ctx.control;
    let (pn, tn, task) = (ctx.process_nr, ctx.thread_nr, ctx.task_nr);
    bind_task(p, task, ctx.all_cpus)?;
    sys::set_task_name(&format!("thread {pn}/{tn}"));

    let mut refused = None;
    let thread_area = DataArea::alloc(
        p.bytes_thread,
        false,
        ctx.alloc,
        ctx.val0 ^ 0x7468_7264,
        &mut refused,
    )
    .map_err(|e| format!("thread memory: {e}"))?;
    warn_thp(c, refused);
    let thread = thread_area.as_ref().map(DataArea::region);
    if p.show_details >= 2 {
        let addr = |r: Option<&Region>| r.map_or(0, Region::addr);
        print_line(&format!(
            "#  thread {pn:2} / {tn:2} global mem: {:#x}, process mem: {:#x}, thread mem: {:#x}",
            addr(ctx.global),
            addr(ctx.process),
            addr(thread)
        ));
    }

    startup_barrier(p, c);

    let a = Access::of(p);
    let first_task = task == 0;
    let work_done = p.bytes_per_loop();
    let timed = !(p.show_details < 0 && p.perturb_secs == 0 && p.nr_secs == 0);
    let start0 = Instant::now();
    let mut last_stop = start0;
    let mut prev_sec = 0u64;
    let mut last_perturb = 0u64;
    let mut val = ctx.val0;
    let mut bytes_done = 0u64;
    let mut completed = 0u64;
    for l in 0..p.nr_loops {
        if c.stopping() {
            break;
        }
        val = one_loop(ctx, thread, l, val, &a);
        c.set_cpu(task, crate::placement::current_cpu());
        bytes_done += work_done;
        completed += 1;
        c.set_loop(task, l, completed, bytes_done);
        if !timed {
            continue;
        }
        let now = Instant::now();
        let elapsed = now - start0;
        if p.nr_secs > 0 && elapsed.as_secs() >= u64::from(p.nr_secs) {
            c.request_stop();
            break;
        }
        let sec = elapsed.as_secs();
        let loop_ns = (now - last_stop).as_nanos() as f64;
        last_stop = now;
        if sec == prev_sec {
            continue;
        }
        prev_sec = sec;
        if first_task && p.perturb_secs > 0 && sec - last_perturb >= u64::from(p.perturb_secs) {
            last_perturb = sec;
            perturb(ctx, p.show_details);
        }
        if p.show_details >= 3 {
            print_line(&format!(
                " #{pn:2} / {tn:2}: {:14.2} nsecs/op [val: {val:016x}]",
                loop_ns / bytes_done.max(1) as f64
            ));
        }
    }
    let runtime_ns = start0.elapsed().as_nanos() as u64;
    c.word(Word::Leaving).fetch_add(1, Relaxed);
    if let Some(area) = &thread_area {
        c.store_placement(AreaId::Thread(task), &area.placement());
    }
    c.finish_task(task, runtime_ns, val);
    drop(thread_area);
    c.word(Word::Done).fetch_add(1, Relaxed);
    sys::futex_wake_all(c.word(Word::Done));
    Ok(())
}

/// Startup: check in, wait for the parent's go, check through.
fn startup_barrier(p: &Params, c: &Control) {
    let started = c.word(Word::Started).fetch_add(1, Relaxed) + 1;
    if started as usize == p.nr_tasks {
        sys::futex_wake_all(c.word(Word::Started));
    }
    if p.serialize_startup {
        while c.word(Word::Go).load(Relaxed) == 0 {
            sys::futex_wait(c.word(Word::Go), 0, None);
        }
        let working = c.word(Word::Working).fetch_add(1, Relaxed) + 1;
        if working as usize == p.nr_tasks {
            sys::futex_wake_all(c.word(Word::Working));
        }
    }
}

/// Loop `l` of one task over its global, process and thread memory (perf's
/// order), then its sleep and its process-locked memory under the
/// process lock; the running value after it.
fn one_loop(ctx: &TaskCtx, thread: Option<&Region>, l: u32, mut val: u64, a: &Access) -> u64 {
    let p = ctx.params;
    let (pn64, tn64) = (ctx.process_nr as u64, ctx.thread_nr as u64);
    val = val.wrapping_add(do_work(
        ctx.global,
        p.bytes_global,
        pn64,
        p.nr_proc as u64,
        l,
        val,
        a,
    ));
    val = val.wrapping_add(do_work(
        ctx.process,
        p.bytes_process,
        tn64,
        p.nr_threads as u64,
        l,
        val,
        a,
    ));
    val = val.wrapping_add(do_work(thread, p.bytes_thread, 0, 1, l, val, a));
    if p.sleep_usecs > 0 {
        let _g = ctx.process_lock.lock().unwrap_or_else(|e| e.into_inner());
        std::thread::sleep(std::time::Duration::from_micros(u64::from(p.sleep_usecs)));
    }
    if p.bytes_process_locked > 0 {
        let _g = ctx.process_lock.lock().unwrap_or_else(|e| e.into_inner());
        val = val.wrapping_add(do_work(
            ctx.process,
            p.bytes_process_locked,
            tn64,
            p.nr_threads as u64,
            l,
            val,
            a,
        ));
    }
    val
}

/// perf's `-x`: move to a CPU in the other half of the machine (the last
/// CPU from the lower half, the first from the upper) and straight back.
fn perturb(ctx: &TaskCtx, details: i32) {
    let cpus: Vec<usize> = ctx.all_cpus.iter().collect();
    let (Some(&first), Some(&last)) = (cpus.first(), cpus.last()) else {
        return;
    };
    let here = crate::placement::current_cpu();
    let rank = cpus.iter().position(|&c| c == here).unwrap_or(0);
    let target = if rank < cpus.len() / 2 { last } else { first };
    let Ok(orig) = crate::placement::current_affinity() else {
        return;
    };
    if crate::placement::pin_current_thread(&CpuSet::from_ids([target])).is_ok() {
        if details >= 1 {
            print_line(&format!(
                " (injecting perturbalance, moved to CPU#{target})"
            ));
        }
        let _ = crate::placement::pin_current_thread(&orig);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access_rw() -> Access {
        Access {
            reads: true,
            writes: true,
            backwards: true,
            memset: false,
            rand_walk: false,
            nr_loops: u32::MAX,
        }
    }

    fn region_with(words: usize) -> Region {
        let mut r = Region::map(words * 8, false, 0).unwrap();
        r.fill_counting(0);
        r
    }

    fn values(r: &Region) -> Vec<u64> {
        r.words().iter().map(|w| w.load(Relaxed)).collect()
    }

    #[test]
    fn offsets_spread_tasks_and_loops() {
        // 4 tasks over 1000 words start 250 apart; without -l loops do not
        // shift (words / 4294967295 is 0), with -l 4 they shift by 250.
        assert_eq!(start_offset(1000, 0, 4, 0, u32::MAX), 0);
        assert_eq!(start_offset(1000, 3, 4, 7, u32::MAX), 750);
        assert_eq!(start_offset(1000, 3, 4, 1, 4), 0);
        assert_eq!(start_offset(1000, 1, 4, 2, 4), 750);
    }

    #[test]
    fn forward_pass_visits_all_but_the_start_word_in_order() {
        // Writes only: each word gets val + 1 with val unchanged, so a
        // pass marks exactly the words it visits.
        let r = region_with(8);
        let a = Access {
            reads: false,
            backwards: false,
            ..access_rw()
        };
        // nr 1 of 2 → off = 4: words 5,6,7,0,1,2,3 get written.
        for w in r.words() {
            w.store(0, Relaxed);
        }
        let v = do_work(Some(&r), 64, 1, 2, 0, 41, &a);
        assert_eq!(v, 41);
        assert_eq!(values(&r), [42, 42, 42, 42, 0, 42, 42, 42]);
    }

    #[test]
    fn reads_and_writes_chain_through_the_words() {
        // Words 0..4 hold 0,1,2,3; nr 0 → off 0, forward from word 1:
        // val += 1 → 1, store 2; val += 2 → 3, store 4; val += 3 → 6, store 7.
        let r = region_with(4);
        let a = Access {
            backwards: false,
            ..access_rw()
        };
        let v = do_work(Some(&r), 32, 0, 1, 0, 0, &a);
        assert_eq!(v, 6);
        assert_eq!(values(&r), [0, 2, 4, 7]);
    }

    #[test]
    fn backwards_alternates_with_task_and_loop_parity() {
        // With -B, (nr + loop) even goes backwards: from off - 1 down,
        // wrapping to the top. Words 0..4 hold 0,1,2,3, off 0 → visit 3,2,1.
        let r = region_with(4);
        let v = do_work(Some(&r), 32, 0, 1, 0, 0, &access_rw());
        // val: +3 → 3 (store 4), +2 → 5 (store 6), +1 → 6 (store 7).
        assert_eq!(v, 6);
        assert_eq!(values(&r), [0, 7, 6, 4]);
        // Loop 1 (odd) goes forwards again.
        let r = region_with(4);
        assert_eq!(do_work(Some(&r), 32, 0, 1, 1, 0, &access_rw()), 6);
        assert_eq!(values(&r), [0, 2, 4, 7]);
    }

    #[test]
    fn memset_clears_the_area_and_returns_val_unchanged() {
        let r = region_with(4096);
        let a = Access {
            memset: true,
            rand_walk: false,
            ..access_rw()
        };
        assert_eq!(do_work(Some(&r), 4096 * 8, 0, 1, 0, 9, &a), 9);
        assert!(values(&r).iter().all(|&v| v == 0));
        // No area: val comes back (and the caller doubles it, as perf).
        assert_eq!(do_work(None, 0, 0, 1, 0, 9, &a), 9);
    }

    #[test]
    fn random_walk_touches_lfsr_chunks() {
        // 4096 words: 4 chunks starting at lfsr % 4096, each up to 1024
        // words (cut at words - 1).
        let r = region_with(4096);
        let a = Access {
            memset: true,
            rand_walk: true,
            ..access_rw()
        };
        for w in r.words() {
            w.store(1, Relaxed);
        }
        do_work(Some(&r), 4096 * 8, 0, 1, 0, 1, &a);
        let mut expected = vec![1u64; 4096];
        let mut lfsr = 1u32;
        for _ in 0..4 {
            lfsr = lfsr_32(lfsr);
            let start = lfsr as usize % 4096;
            let end = (start + 1024).min(4095);
            for e in &mut expected[start..end] {
                *e = 0;
            }
        }
        assert_eq!(values(&r), expected);
        assert!(values(&r).contains(&0));
    }
}
