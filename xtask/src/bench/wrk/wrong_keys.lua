-- Request generation of `cargo xtask bench --scale`'s wrong-key flood (xtask/src/bench/scale.rs);
-- done.lua is appended to it. Every request is a GET of the URL's path with a key of the right
-- shape, `apz_<key id>_<secret>`, whose key id is drawn at random: the server looks every one up
-- in the database, finds no key, and keeps the miss in its negative cache, which is what the
-- flood measures. The secret is the same for all (a key id no key has fails whatever follows).
-- No arguments.
local base62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
local secret = "wrongwrongwrongwrongwrongwrong00"

local threads = {}

function setup(thread)
  thread:set("thread_index", #threads)
  table.insert(threads, thread)
end

function init(args)
  -- A fixed seed per thread: runs draw the same key ids (each run's server starts empty).
  math.randomseed(1 + thread_index)
end

local function random_key_id()
  local chars = {}
  for i = 1, 12 do
    local c = math.random(1, 62)
    chars[i] = string.sub(base62, c, c)
  end
  return table.concat(chars)
end

function request()
  return wrk.format(nil, nil, { ["X-API-KEY"] = "apz_" .. random_key_id() .. "_" .. secret })
end
