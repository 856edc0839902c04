-- `cargo xtask bench --scale`'s idle connections (xtask/src/bench/scale.rs); done.lua is
-- appended to it. wrk calls `delay` before every request, a connection's first one too: for
-- the first WINDOW seconds a connection sends a request a second (so each one that connects in
-- that time sends at least one, as an idle client's connection would have), then it waits an
-- hour before its next: open and silent until wrk stops at its -d.
--
-- Arguments after `--`: WINDOW
function init(args)
  until_time = os.time() + tonumber(args[1])
end

function delay()
  if os.time() < until_time then
    return 1000
  end
  return 3600000
end
