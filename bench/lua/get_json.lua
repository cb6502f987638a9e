-- GET one fixed path (wrk's URL) asking for JSON.
package.path = package.path .. ";" .. debug.getinfo(1, "S").source:match("@(.*/)") .. "?.lua"
local common = require("common")
done = common.done
wrk.headers["Accept"] = "application/json"
