//! The standard `process_*` metrics of Prometheus's client libraries (resident and virtual
//! memory, open and maximum file descriptors, start time, CPU seconds), sampled at each scrape
//! by metrics-process (`/proc/self` through procfs on Linux, the OS's own calls elsewhere).
//!
//! A value that cannot be read is left out of that scrape, never made up: an unlimited
//! descriptor limit has no `process_max_fds`. The start time needs the boot time from
//! `/proc/stat`, which systemd's `ProcSubset=pid` hides: there it is the wall-clock time when
//! the metrics were created, at the server's start.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

/// The `process_*` families, read at each scrape.
#[derive(Debug)]
pub(super) struct ProcessCollector {
    /// Seconds since the Unix epoch when the metrics were created: the start time where the
    /// boot time cannot be read.
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

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let sample = metrics_process::collector::collect();
        if let Some(value) = sample.cpu_seconds_total {
            let counter = ConstCounter::new(value);
            counter.encode(encoder.encode_descriptor(
                "process_cpu_seconds",
                "Total user and system CPU time spent in seconds",
                None,
                counter.metric_type(),
            )?)?;
        }
        let float = |value: Option<u64>| value.map(|v| v as f64);
        let gauges = [
            (
                "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds",
                Some(float(sample.start_time_seconds).unwrap_or(self.created)),
            ),
            (
                "process_resident_memory_bytes",
                "Resident memory size in bytes",
                float(sample.resident_memory_bytes),
            ),
            (
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes",
                float(sample.virtual_memory_bytes),
            ),
            (
                "process_open_fds",
                "Number of open file descriptors",
                float(sample.open_fds),
            ),
            (
                "process_max_fds",
                "Maximum number of open file descriptors",
                // 0 is how metrics-process says "unlimited".
                float(sample.max_fds.filter(|&max| max > 0)),
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
