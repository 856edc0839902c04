-- The one wrk script of `cargo xtask bench` (xtask/src/bench/wrk.rs), for one wrk thread.
-- `done` prints the run as one JSON line: wrk's own report is text and its --latency stops at p99.
-- The arguments after `--` choose what a run sends:
--   list KEY [ETAG]         GETs of the URL, with If-None-Match: ETAG when given
--   delete KEY FIRST        DELETE bench-<n> from FIRST up, each n once
--   mixed KEY FIRST ETAG    per 10 requests: 1 delete, 1 GET with If-None-Match: ETAG, 8 GETs
function init(args)
  mode, key, next_id, etag, sent = args[1], args[2], tonumber(args[3]), args[4], 0
  if mode == "list" then
    -- Without `request` (wrk looks for it after `init`) wrk sends one prebuilt request at full
    -- speed; it built that request before `init`, so it is built again with the headers.
    wrk.headers["X-API-KEY"], wrk.headers["If-None-Match"] = key, args[3]
    local prebuilt = wrk.format()
    wrk.request, request = function() return prebuilt end, nil
  end
end

function request()
  sent = sent + 1
  if mode == "delete" or sent % 10 == 0 then
    next_id = next_id + 1
    local path = "/api/v1/applications/profiles/bench-" .. (next_id - 1)
    return wrk.format("DELETE", path, { ["X-API-KEY"] = key })
  end
  return wrk.format("GET", nil, { ["X-API-KEY"] = key, ["If-None-Match"] = sent % 10 == 1 and etag or nil })
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"requests":%d,"duration_us":%d,"errors":{"connect":%d,"read":%d,' ..
    '"write":%d,"status":%d,"timeout":%d},"latency_us":{"p50":%d,"p99":%d,' ..
    '"p99.9":%d}}\n', summary.requests, summary.duration, e.connect, e.read, e.write, e.status,
    e.timeout, latency:percentile(50), latency:percentile(99),
    latency:percentile(99.9)))
end
