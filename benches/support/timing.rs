//! Timing shared by the benchmarks that print ratios: per-thread CPU time, interleaved batches.

use criterion::Criterion;
use std::time::{Duration, Instant};

/// The end of a ratio-printing bench's `main`: with `--ratios-only` only the ratio table; otherwise
/// the criterion benchmarks, then (under `cargo bench`, which passes `--bench`) the table.
/// `cargo test --benches` runs each benchmark once, without `--bench`, and prints no table.
pub fn run(args: &[String], benches: impl FnOnce(), ratios: impl Fn()) {
    if args.iter().any(|a| a == "--ratios-only") {
        ratios();
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
    if args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--list") {
        ratios();
    }
}

/// Nanoseconds this thread has spent on a CPU, so that time spent preempted on a busy machine
/// does not count (Linux; wall-clock time elsewhere).
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
pub fn cpu_nanos(wall_start: Instant) -> u64 {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut t = Timespec { sec: 0, nsec: 0 };
    // SAFETY: clock_gettime writes one timespec through a pointer to a live, aligned value.
    if unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0 {
        t.sec as u64 * 1_000_000_000 + t.nsec as u64
    } else {
        wall_start.elapsed().as_nanos() as u64
    }
}

#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
pub fn cpu_nanos(wall_start: Instant) -> u64 {
    wall_start.elapsed().as_nanos() as u64
}

/// Median CPU time per call of each function, over `rounds` batches interleaved with the others'.
pub fn interleaved(fns: &mut [&mut dyn FnMut()], rounds: usize) -> Vec<Duration> {
    let origin = Instant::now();
    // Calibrate each to at least 10 ms of CPU a batch.
    let iters: Vec<u64> = fns
        .iter_mut()
        .map(|f| {
            let mut n = 1u64;
            loop {
                let start = cpu_nanos(origin);
                for _ in 0..n {
                    f();
                }
                if cpu_nanos(origin) - start >= 10_000_000 {
                    return n;
                }
                n *= 2;
            }
        })
        .collect();
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); fns.len()];
    for _ in 0..rounds {
        for (i, f) in fns.iter_mut().enumerate() {
            let start = cpu_nanos(origin);
            for _ in 0..iters[i] {
                f();
            }
            let spent = cpu_nanos(origin) - start;
            samples[i].push(Duration::from_nanos(spent / iters[i]));
        }
    }
    samples
        .into_iter()
        .map(|mut s| {
            s.sort_unstable();
            s[s.len() / 2]
        })
        .collect()
}

/// The flag that makes a bench a child of [`isolated`]: `--time-alone NAME`.
const ALONE: &str = "--time-alone";

/// In a child started by [`isolated`] (`--time-alone NAME` among `args`): times the function `pick`
/// gives for NAME alone (the median of 7 batches of at least 10 ms of CPU), prints its time per call
/// in nanoseconds and returns `true` (the bench then has nothing else to do). `false` elsewhere.
pub fn time_alone(args: &[String], pick: impl FnOnce(&str) -> Option<Box<dyn FnMut()>>) -> bool {
    let Some(name) = args
        .iter()
        .position(|a| a == ALONE)
        .and_then(|at| args.get(at + 1))
    else {
        return false;
    };
    let Some(mut f) = pick(name) else {
        eprintln!("{ALONE}: no function named {name}");
        std::process::exit(2);
    };
    let t = interleaved(&mut [&mut *f], 7);
    println!("{}", t.first().map_or(0, Duration::as_nanos));
    true
}

/// The median time per call of each function `names` names, each timed alone in a fresh process (a
/// child of this one, see [`time_alone`]), the processes alternated `rounds` times so that drift on a
/// shared machine cancels out. In one process, a function runs on the heap the others left behind:
/// a baseline that allocates a lot can run a quarter slower after a reader that used large buffers
/// (see BENCHMARKS.md, "Partial values"), which flatters a ratio to it. `None` for a function no
/// child could time.
fn isolated(names: &[&str], rounds: usize) -> Vec<Option<Duration>> {
    let exe = std::env::current_exe().ok();
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); names.len()];
    for _ in 0..rounds {
        for (name, samples) in names.iter().zip(&mut samples) {
            let output = exe.as_ref().and_then(|exe| {
                std::process::Command::new(exe)
                    .args([ALONE, name])
                    .stderr(std::process::Stdio::inherit())
                    .output()
                    .ok()
            });
            let nanos = output
                .and_then(|output| String::from_utf8(output.stdout).ok())
                .and_then(|text| text.trim().parse::<u64>().ok());
            samples.extend(nanos.map(Duration::from_nanos));
        }
    }
    samples
        .into_iter()
        .map(|mut s| {
            s.sort_unstable();
            s.get(s.len() / 2).copied()
        })
        .collect()
}

/// A ratio table of functions each timed alone in a fresh process ([`isolated`], five alternated
/// rounds): each row names its function and its baseline by their index in `names`.
pub fn isolated_table(title: &str, names: &[&str], rows: &[(usize, usize, &str, &str)]) {
    const ROUNDS: usize = 5;
    println!(
        "\n## {title}, each alone in its own process (median of {ROUNDS} alternated processes)\n"
    );
    println!("| benchmark | ours | baseline | ratio | goal |");
    println!("|---|---|---|---|---|");
    let t = isolated(names, ROUNDS);
    for &(ours, base, what, goal) in rows {
        match (t.get(ours), t.get(base)) {
            (Some(Some(ours)), Some(Some(base))) => row(what, *ours, *base, goal),
            // A child that failed (it says why on its standard error) leaves its rows unmeasured.
            _ => println!("| {what} | not measured | | | {goal} |"),
        }
    }
}

/// One row of a ratio table: ours, the baseline, their ratio and the goal.
pub fn row(what: &str, ours: Duration, base: Duration, goal: &str) {
    let ratio = ours.as_secs_f64() / base.as_secs_f64();
    println!(
        "| {what} | {:.2} us | {:.2} us | {ratio:.2}x | {goal} |",
        ours.as_secs_f64() * 1e6,
        base.as_secs_f64() * 1e6
    );
}

/// Times `run` on each of `texts` (of `kbs[i]` KB each, each twice the one before) in interleaved
/// batches and prints one row per doubling: the time at each size against the one before (about 2x
/// for linear work).
pub fn doubling_rows(
    label: &str,
    kbs: &[usize],
    texts: &[String],
    run: &dyn Fn(&str),
    rounds: usize,
) {
    let mut fns: Vec<Box<dyn FnMut() + '_>> = texts
        .iter()
        .map(|text| Box::new(move || run(text)) as Box<dyn FnMut()>)
        .collect();
    let mut refs: Vec<&mut dyn FnMut()> = fns
        .iter_mut()
        .map(|f| &mut **f as &mut dyn FnMut())
        .collect();
    let t = interleaved(&mut refs, rounds);
    for (i, kb) in kbs.iter().enumerate().skip(1) {
        let (Some(larger), Some(smaller)) = (t.get(i), t.get(i - 1)) else {
            continue;
        };
        row(
            &format!("{label}, {kb} KB vs {} KB", kb / 2),
            *larger,
            *smaller,
            "<= 2.2x",
        );
    }
}
