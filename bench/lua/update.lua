-- POST /produtos/{id} with _method=PUT, as the edit form does, for a random id; args: highest id.
package.path = package.path .. ";" .. debug.getinfo(1, "S").source:match("@(.*/)") .. "?.lua"
local common = require("common")
done = common.done
init = common.init
local body = "_method=PUT&produto.nome=Caneca+editada&produto.descricao=&produto.preco=31%2C50&_method=PUT"

function request()
  return wrk.format("POST", "/produtos/" .. common.random_id(),
    {["Content-Type"] = "application/x-www-form-urlencoded"}, body)
end
