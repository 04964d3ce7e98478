-- wrk script for bench/web.py's learners at their own pace: _wrk.lua's requests, and between
-- one answer and the next request on a connection a think time drawn from THINK_MS/2 to
-- 3*THINK_MS/2, as a learner reads the card. wrk times each request from its send, not the wait.
-- wrk -s _wrk_paced.lua URL -- FILE THREADS MAX_REQUESTS_PER_THREAD once|cycle THINK_MS
local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)") or "./"
dofile(here .. "_wrk.lua")

local think_ms = 1000
local base_init = init

function init(args)
  think_ms = tonumber(args[5]) or think_ms
  math.randomseed(os.time() + tid * 7919)
  base_init(args)
end

function delay()
  return math.random(math.floor(think_ms / 2), math.floor(think_ms * 3 / 2))
end
