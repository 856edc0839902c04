-- Requests of `cargo xtask bench --scale` that stop at a count (xtask/src/bench/scale.rs);
-- done.lua is appended to it. The thread stops sending after LIMIT answers, but wrk still ends
-- only at its -d, so such a run's rate is not requests / duration. Written for one wrk thread.
--
-- Arguments after `--`: MODE KEY FIRST LIMIT [close]
--   delete KEY FIRST LIMIT    DELETE bench-<n>, every n once, from FIRST up
--   keys FILE FIRST LIMIT     GET of the URL's path with the key on line n of FILE, from FIRST up
-- `close` (always for keys) sends `Connection: close`: every request on a new connection, so a
-- key is never remembered by its connection and each request pays a connection's set-up.
function init(args)
  mode, key, next_id, limit = args[1], args[2], tonumber(args[3]), tonumber(args[4])
  close = args[5] == "close" or mode == "keys"
  answered = 0
  if mode == "keys" then
    keys = {}
    for line in io.lines(key) do
      table.insert(keys, line)
    end
  end
end

function request()
  local n = next_id
  next_id = next_id + 1
  local headers = { ["X-API-KEY"] = key }
  if close then
    headers["Connection"] = "close"
  end
  if mode == "keys" then
    headers["X-API-KEY"] = keys[n]
    return wrk.format("GET", nil, headers)
  end
  return wrk.format("DELETE", "/api/v1/applications/profiles/bench-" .. n, headers)
end

function response(status, headers, body)
  answered = answered + 1
  if answered >= limit then
    wrk.thread:stop()
  end
end
