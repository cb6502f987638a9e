-- POST /produtos/{id} with _method=PUT, as the edit form does, for a random id. Args: the
-- highest id, then the credentials header's name and value (left out: anonymous).
package.path = package.path .. ";" .. debug.getinfo(1, "S").source:match("@(.*/)") .. "?.lua"
local common = require("common")
done = common.done
local headers = {["Content-Type"] = "application/x-www-form-urlencoded"}
-- Each request names the product anew: a save that changes nothing is not written (no version,
-- no event), so a constant body would measure that instead of an update.
local sent = 0

function init(args)
  common.init(args)
  common.credentials(args, headers)
end

function request()
  sent = sent + 1
  local body = "_method=PUT&produto.nome=Caneca+editada+" .. sent
    .. "&produto.descricao=&produto.preco=31%2C50&_method=PUT"
  return wrk.format("POST", "/produtos/" .. common.random_id(), headers, body)
end
