//! The standard `process_*` metrics of Prometheus's client libraries (resident and virtual
//! memory, open and maximum file descriptors, start time, CPU seconds), read from `/proc/self`
//! at each scrape. Linux only: elsewhere the collector writes nothing.
//!
//! What each reads, as the Go client's `procfs` does: `/proc/self/stat` (CPU ticks and the
//! start in ticks after boot; `USER_HZ` is 100 on Linux, which the Go client assumes too),
//! `/proc/self/status` (`VmRSS`, `VmSize`, in KiB, so no page size is needed),
//! `/proc/self/fd` (one entry per open descriptor), `/proc/self/limits` (`Max open files`,
//! the soft limit) and `btime` of `/proc/stat` for the boot time. All of `/proc/self` stays
//! readable under systemd's `ProcSubset=pid`, which hides `/proc/stat`: there the start time
//! is the wall-clock time when the metrics were created, at the server's start. A value that
//! cannot be read is left out of that scrape, never made up.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

/// The `process_*` families, read at each scrape.
#[derive(Debug)]
pub(super) struct ProcessCollector {
    /// Seconds since the Unix epoch when the metrics were created: the start time where
    /// `/proc/stat` cannot be read.
    created: f64,
}

impl ProcessCollector {
    pub(super) fn new() -> Self {
        let created = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        Self { created }
    }
}

/// One scrape's values; `None` where the file could not be read or parsed.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Sample {
    pub cpu_seconds: Option<f64>,
    pub start_time_seconds: Option<f64>,
    pub resident_memory_bytes: Option<f64>,
    pub virtual_memory_bytes: Option<f64>,
    pub open_fds: Option<f64>,
    pub max_fds: Option<f64>,
}

/// Clock ticks per second of `/proc/[pid]/stat` (`USER_HZ`): 100 on every architecture Linux
/// runs on today.
const USER_HZ: f64 = 100.0;

impl Sample {
    #[cfg(target_os = "linux")]
    fn read(created: f64) -> Self {
        let read = |path: &str| std::fs::read_to_string(path).ok();
        let stat = read("/proc/self/stat").and_then(|text| parse_stat(&text));
        let status = read("/proc/self/status");
        let kib = |field: &str| {
            status
                .as_deref()
                .and_then(|text| status_kib(text, field))
                .map(|kib| kib * 1024.0)
        };
        let boot = read("/proc/stat").and_then(|text| boot_time(&text));
        Self {
            cpu_seconds: stat.map(|s| (s.utime + s.stime) / USER_HZ),
            start_time_seconds: Some(match (boot, stat) {
                (Some(boot), Some(stat)) => boot + stat.start_ticks / USER_HZ,
                _ => created,
            }),
            resident_memory_bytes: kib("VmRSS:"),
            virtual_memory_bytes: kib("VmSize:"),
            // Less the descriptor `read_dir` holds open on the directory while listing it.
            open_fds: std::fs::read_dir("/proc/self/fd")
                .ok()
                .map(|entries| entries.count().saturating_sub(1) as f64),
            max_fds: read("/proc/self/limits").and_then(|text| max_open_files(&text)),
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn read(_created: f64) -> Self {
        Self::default()
    }
}

/// The fields of `/proc/self/stat` used here, in clock ticks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Stat {
    pub utime: f64,
    pub stime: f64,
    pub start_ticks: f64,
}

/// `utime` (14th field), `stime` (15th) and `starttime` (22nd) of a `/proc/[pid]/stat` line.
/// The second field, the command in parentheses, may hold spaces and parentheses itself, so
/// fields are counted from after its last `)`.
pub(super) fn parse_stat(text: &str) -> Option<Stat> {
    let (_, after) = text.rsplit_once(')')?;
    // `after` starts with the 3rd field (state).
    let fields: Vec<&str> = after.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3)?.parse::<f64>().ok();
    Some(Stat {
        utime: field(14)?,
        stime: field(15)?,
        start_ticks: field(22)?,
    })
}

/// A `Name:   1234 kB` line of `/proc/[pid]/status`, in KiB.
pub(super) fn status_kib(text: &str, field: &str) -> Option<f64> {
    let line = text.lines().find_map(|line| line.strip_prefix(field))?;
    let mut words = line.split_whitespace();
    let value = words.next()?.parse::<f64>().ok()?;
    (words.next() == Some("kB")).then_some(value)
}

/// The soft limit of `Max open files` in `/proc/[pid]/limits` (`unlimited` is left out).
pub(super) fn max_open_files(text: &str) -> Option<f64> {
    let line = text
        .lines()
        .find_map(|line| line.strip_prefix("Max open files"))?;
    line.split_whitespace().next()?.parse::<f64>().ok()
}

/// `btime` of `/proc/stat`: the boot time, in seconds since the Unix epoch.
pub(super) fn boot_time(text: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix("btime "))?
        .trim()
        .parse::<f64>()
        .ok()
}

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let sample = Sample::read(self.created);
        if let Some(value) = sample.cpu_seconds {
            let counter = ConstCounter::new(value);
            counter.encode(encoder.encode_descriptor(
                "process_cpu_seconds",
                "Total user and system CPU time spent in seconds",
                None,
                counter.metric_type(),
            )?)?;
        }
        let gauges = [
            (
                "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds",
                sample.start_time_seconds,
            ),
            (
                "process_resident_memory_bytes",
                "Resident memory size in bytes",
                sample.resident_memory_bytes,
            ),
            (
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes",
                sample.virtual_memory_bytes,
            ),
            (
                "process_open_fds",
                "Number of open file descriptors",
                sample.open_fds,
            ),
            (
                "process_max_fds",
                "Maximum number of open file descriptors",
                sample.max_fds,
            ),
        ];
        for (name, help, value) in gauges {
            if let Some(value) = value {
                let gauge = ConstGauge::new(value);
                gauge.encode(encoder.encode_descriptor(
                    name,
                    help,
                    None,
                    gauge.metric_type(),
                )?)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_proc_files_it_reads() {
        // A command with a space and a parenthesis of its own.
        let stat = "4242 (appzone) (x) S 1 4242 4242 0 -1 4194560 1510 0 0 0 \
                    250 75 0 0 20 0 9 0 123456 1234567168 6600 18446744073709551615";
        assert_eq!(
            parse_stat(stat),
            Some(Stat {
                utime: 250.0,
                stime: 75.0,
                start_ticks: 123_456.0
            })
        );
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(parse_stat("1 (x) S 1 2"), None);
        let status = "Name:\tappzone-server\nVmSize:\t  1205636 kB\nVmRSS:\t   26400 kB\n";
        assert_eq!(status_kib(status, "VmRSS:"), Some(26_400.0));
        assert_eq!(status_kib(status, "VmSize:"), Some(1_205_636.0));
        assert_eq!(status_kib(status, "VmSwap:"), None);
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max processes             63459                63459                processes \n\
                      Max open files            65536                524288               files     \n";
        assert_eq!(max_open_files(limits), Some(65_536.0));
        assert_eq!(
            max_open_files(
                "Max open files            unlimited            unlimited            files"
            ),
            None
        );
        assert_eq!(
            boot_time("cpu  1 2 3\nbtime 1764115200\nprocesses 99\n"),
            Some(1_764_115_200.0)
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn reads_this_process() {
        let sample = Sample::read(0.0);
        let rss = sample.resident_memory_bytes.expect("VmRSS");
        let size = sample.virtual_memory_bytes.expect("VmSize");
        assert!(rss > 0.0 && size >= rss, "{sample:?}");
        // Other tests open and close files on their threads meanwhile: no exact count.
        let open = sample.open_fds.expect("fds");
        assert!(
            open >= 1.0 && sample.max_fds.expect("limit") >= open,
            "{sample:?}"
        );
        assert!(sample.cpu_seconds.expect("cpu") >= 0.0);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .expect("after 1970")
            .as_secs_f64();
        let start = sample.start_time_seconds.expect("start");
        assert!(
            start > now - 86_400.0 && start <= now + 1.0,
            "{start} vs {now}"
        );
    }
}
