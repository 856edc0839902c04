-- Request generation of `cargo xtask bench` (xtask/src/bench/load.rs) for the delete and mixed
-- scenarios; done.lua is appended to it. The list scenarios use done.lua alone, with no
-- `request` function, so wrk sends its prebuilt request at full speed: wrk decides that when it
-- loads the script, so the two cannot be one script.
--
-- Arguments after `--`:
--   delete KEY FIRST NTHREADS        DELETE bench-<n>, every n once, from FIRST up
--   mixed KEY FIRST NTHREADS ETAG    per 10 requests: 1 DELETE, 1 GET with If-None-Match, 8 GET
local threads = {}

function setup(thread)
  thread:set("thread_index", #threads)
  table.insert(threads, thread)
end

function init(args)
  mode = args[1]
  key = args[2]
  first = tonumber(args[3])
  nthreads = tonumber(args[4])
  etag = args[5]
  counter = 0
  deletes = 0
end

-- Thread i of n takes first + i + k*n, so no two threads delete the same profile.
local function next_delete()
  local n = first + thread_index + deletes * nthreads
  deletes = deletes + 1
  return wrk.format("DELETE", "/api/v1/applications/profiles/bench-" .. n, { ["X-API-KEY"] = key })
end

function request()
  if mode == "delete" then
    return next_delete()
  end
  counter = counter + 1
  local slot = counter % 10
  if slot == 0 then
    return next_delete()
  elseif slot == 1 then
    return wrk.format("GET", nil, { ["X-API-KEY"] = key, ["If-None-Match"] = etag })
  end
  return wrk.format("GET", nil, { ["X-API-KEY"] = key })
end
