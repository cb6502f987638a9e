-- POST /produtos with a JSON body (201 expected). Args: the highest id (unused), then the
-- credentials header's name and value (left out: anonymous).
package.path = package.path .. ";" .. debug.getinfo(1, "S").source:match("@(.*/)") .. "?.lua"
local common = require("common")
done = common.done
local headers = {["Content-Type"] = "application/json", ["Accept"] = "application/json"}
local body = '{"nome": "Caneca de bench", "descricao": "Criada pelo wrk", "preco": "29.90"}'

function init(args)
  common.init(args)
  common.credentials(args, headers)
end

function request()
  return wrk.format("POST", nil, headers, body)
end
