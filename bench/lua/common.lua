-- Shared by every case: random ids for the cases that take the highest id as their argument,
-- and the run's figures printed as one JSON line for bench.py to read.
local M = {}
local highest

function M.init(args)
  highest = tonumber(args[1])
  math.randomseed(os.time() + tonumber(tostring({}):match("0x(%x+)"), 16) % 100000)
end

-- The credentials a write sends, from a script's args after the highest id: the header's name
-- and value (a session's Cookie, a token's Authorization); none given, anonymous.
function M.credentials(args, headers)
  if args[2] then headers[args[2]] = args[3] end
end

function M.random_id()
  return math.random(1, highest)
end

function M.done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    '{"requests": %d, "duration_us": %d, "p50_us": %d, "p99_us": %d, ' ..
    '"errors": %d, "bad_status": %d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    errors.connect + errors.read + errors.write + errors.timeout, errors.status))
end

return M
