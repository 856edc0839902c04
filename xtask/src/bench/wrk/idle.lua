-- `cargo xtask bench --scale`'s idle connections (xtask/src/bench/scale.rs); done.lua is
-- appended to it. Every connection sends wrk's prebuilt request at once, then waits an hour
-- (`delay`) before its next: it stays open and silent until wrk stops at its -d.
function delay()
  return 3600000
end
