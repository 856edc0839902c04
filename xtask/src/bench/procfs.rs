//! CPU time and memory of a process, read from `/proc`: what a server and wrk cost per request.

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// `utime + stime` of process `pid`, in clock ticks.
pub(super) fn cpu_ticks(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| parse_stat_cpu_ticks(&s))
        .unwrap_or(0)
}

/// CPU ticks of this process's waited-for children (the wrk runs).
pub(super) fn children_cpu_ticks() -> u64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| parse_stat_children_ticks(&s))
        .unwrap_or(0)
}

/// A `kB` field of `/proc/PID/status` (`VmRSS:`, `VmHWM:`), 0 when the process is gone.
pub(super) fn status_kb(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(field))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// File descriptors process `pid` holds, 0 when it is gone.
pub(super) fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, Iterator::count)
}

/// Microseconds of one clock tick; asked once per run.
pub(super) fn microseconds_per_tick() -> f64 {
    static TICKS_PER_SECOND: OnceLock<u64> = OnceLock::new();
    let ticks = *TICKS_PER_SECOND.get_or_init(|| {
        crate::process::stdout_of(
            Command::new("getconf").arg("CLK_TCK"),
            crate::process::PROBE_TIMEOUT,
        )
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .filter(|&t| t > 0)
        // Linux's USER_HZ wherever getconf is missing.
        .unwrap_or(100)
    });
    1e6 / ticks as f64
}

/// `utime + stime` (fields 14 and 15) of a `/proc/PID/stat` line.
fn parse_stat_cpu_ticks(stat: &str) -> Option<u64> {
    stat_fields_sum(stat, 11)
}

/// `cutime + cstime` (fields 16 and 17): CPU of the waited-for children.
fn parse_stat_children_ticks(stat: &str) -> Option<u64> {
    stat_fields_sum(stat, 13)
}

fn stat_fields_sum(stat: &str, first: usize) -> Option<u64> {
    // The command name (field 2) may contain spaces; fields after it start past the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let a: u64 = fields.get(first)?.parse().ok()?;
    let b: u64 = fields.get(first + 1)?.parse().ok()?;
    Some(a + b)
}

/// Samples a process's RSS every 250 ms on a thread until stopped.
pub(super) struct RssSampler {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Vec<u64>>,
}

impl RssSampler {
    pub(super) fn start(pid: u32) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut samples = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                match status_kb(pid, "VmRSS:") {
                    0 => {}
                    kb => samples.push(kb),
                }
                std::thread::sleep(Duration::from_millis(250));
            }
            samples
        });
        Self { stop, thread }
    }

    pub(super) fn stop(self) -> Vec<u64> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cpu_ticks_past_a_command_name_with_spaces() {
        let stat = "1234 (appzone server) S 1 1234 1234 0 -1 4194560 500 0 0 0 \
                    250 75 0 0 20 0 3 0 100 1000000 300";
        assert_eq!(parse_stat_cpu_ticks(stat), Some(325));
        assert_eq!(parse_stat_children_ticks(stat), Some(0));
        assert_eq!(parse_stat_cpu_ticks("garbage"), None);
    }
}
