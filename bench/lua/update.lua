-- POST /produtos/{id} with _method=PUT, as the edit form does, for a random id; args: highest id.
package.path = package.path .. ";" .. debug.getinfo(1, "S").source:match("@(.*/)") .. "?.lua"
done = require("report").done
local highest
local body = "_method=PUT&produto.nome=Caneca+editada&produto.descricao=&produto.preco=31%2C50&_method=PUT"

function init(args)
  highest = tonumber(args[1])
  math.randomseed(os.time() + tonumber(tostring({}):match("0x(%x+)"), 16) % 100000)
end

function request()
  return wrk.format("POST", "/produtos/" .. math.random(1, highest),
    {["Content-Type"] = "application/x-www-form-urlencoded"}, body)
end
