-- GET one fixed path (wrk's URL), e.g. the list's first page or the new-product form.
package.path = package.path .. ";" .. debug.getinfo(1, "S").source:match("@(.*/)") .. "?.lua"
local common = require("common")
done = common.done
