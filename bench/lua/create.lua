-- POST /produtos as the new-product form does (303 expected).
package.path = package.path .. ";" .. debug.getinfo(1, "S").source:match("@(.*/)") .. "?.lua"
local common = require("common")
done = common.done

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
wrk.body = "produto.nome=Caneca+de+bench&produto.descricao=Criada+pelo+wrk&produto.preco=29%2C90"
