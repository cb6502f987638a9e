-- GET /produtos?q=NNNNN as JSON, a different random 5-digit number each request (see
-- search_varied.lua).
package.path = package.path .. ";" .. debug.getinfo(1, "S").source:match("@(.*/)") .. "?.lua"
local common = require("common")
done = common.done
init = common.init

function request()
  local path = "/produtos?q=" .. math.random(10000, 99999)
  return wrk.format("GET", path, {["Accept"] = "application/json"})
end
