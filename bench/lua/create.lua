-- POST /produtos as the new-product form does (303 expected). Args: the highest id (unused),
-- then the credentials header's name and value (left out: anonymous).
package.path = package.path .. ";" .. debug.getinfo(1, "S").source:match("@(.*/)") .. "?.lua"
local common = require("common")
done = common.done
local headers = {["Content-Type"] = "application/x-www-form-urlencoded"}
local body = "produto.nome=Caneca+de+bench&produto.descricao=Criada+pelo+wrk&produto.preco=29%2C90"

function init(args)
  common.init(args)
  common.credentials(args, headers)
end

function request()
  return wrk.format("POST", nil, headers, body)
end
