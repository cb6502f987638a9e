-- GET /produtos/{id} as JSON, for a random existing id; args: the highest id.
package.path = package.path .. ";" .. debug.getinfo(1, "S").source:match("@(.*/)") .. "?.lua"
done = require("report").done
local highest

function init(args)
  highest = tonumber(args[1])
  math.randomseed(os.time() + tonumber(tostring({}):match("0x(%x+)"), 16) % 100000)
end

function request()
  return wrk.format("GET", "/produtos/" .. math.random(1, highest), {["Accept"] = "application/json"})
end
