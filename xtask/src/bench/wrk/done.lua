-- The `done` hook of every wrk script of `cargo xtask bench` (xtask/src/bench/load.rs): one
-- machine-readable line, because wrk's own `--latency` output stops at p99.
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "APPZONE_WRK requests=%d duration_us=%d status_errors=%d connect_errors=%d read_errors=%d " ..
    "write_errors=%d timeouts=%d p50_us=%d p75_us=%d p90_us=%d p99_us=%d p999_us=%d max_us=%d " ..
    "mean_us=%.1f\n",
    summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(75), latency:percentile(90),
    latency:percentile(99), latency:percentile(99.9), latency.max, latency.mean))
end
