-- GET /produtos/{id} as JSON, for a random existing id; args: the highest id.
package.path = package.path .. ";" .. debug.getinfo(1, "S").source:match("@(.*/)") .. "?.lua"
local common = require("common")
done = common.done
init = common.init

function request()
  return wrk.format("GET", "/produtos/" .. common.random_id(), {["Accept"] = "application/json"})
end
