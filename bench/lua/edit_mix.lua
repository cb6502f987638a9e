-- GET /produtos/{id} (the edit page) as a shop's visitors spread: 80% of the reads on 5% of the
-- products (every 20th id), the rest on any; args: the highest id.
package.path = package.path .. ";" .. debug.getinfo(1, "S").source:match("@(.*/)") .. "?.lua"
local common = require("common")
done = common.done
init = common.init

function request()
  local id = common.random_id()
  if math.random() < 0.8 then
    id = math.max(20, id - id % 20)
  end
  return wrk.format("GET", "/produtos/" .. id)
end
