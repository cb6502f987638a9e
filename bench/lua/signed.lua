-- GET /produtos/{id} for a random existing id, as one client: a browser (the edit page) or a
-- program (JSON), with or without its credentials. Args: the highest id, then "html" or
-- "json", then the credentials header's name and value (left out: anonymous).
package.path = package.path .. ";" .. debug.getinfo(1, "S").source:match("@(.*/)") .. "?.lua"
local common = require("common")
done = common.done
local headers = {}

function init(args)
  common.init(args)
  if args[2] == "json" then headers["Accept"] = "application/json" end
  if args[3] then headers[args[3]] = args[4] end
end

function request()
  return wrk.format("GET", "/produtos/" .. common.random_id(), headers)
end
