-- Request generation of `cargo xtask bench --scale`'s deletes (xtask/src/bench/scale.rs); done.lua
-- is appended to it. Like dynamic.lua's delete mode (DELETE bench-<n>, every n once, from FIRST
-- up), but the thread stops sending after LIMIT answers, so a run deletes no more than a small
-- table holds. wrk still ends only at its -d, so such a run's rate is not requests / duration:
-- scale.rs derives it from the mean latency. Written for one wrk thread.
--
-- Arguments after `--`: KEY FIRST LIMIT
function init(args)
  key = args[1]
  next_id = tonumber(args[2])
  limit = tonumber(args[3])
  answered = 0
end

function request()
  local n = next_id
  next_id = next_id + 1
  return wrk.format("DELETE", "/api/v1/applications/profiles/bench-" .. n, { ["X-API-KEY"] = key })
end

function response(status, headers, body)
  answered = answered + 1
  if answered >= limit then
    wrk.thread:stop()
  end
end
