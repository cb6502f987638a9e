-- GET /produtos?q=NNNNN, a different random 5-digit number each request (a rare word: about
-- 20 products at N = 1,000,000), so that no remembered count or plan can answer for the last.
package.path = package.path .. ";" .. debug.getinfo(1, "S").source:match("@(.*/)") .. "?.lua"
local common = require("common")
done = common.done
init = common.init

function request()
  return wrk.format("GET", "/produtos?q=" .. math.random(10000, 99999))
end
