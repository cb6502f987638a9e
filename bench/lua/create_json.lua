-- POST /produtos with a JSON body (201 expected).
package.path = package.path .. ";" .. debug.getinfo(1, "S").source:match("@(.*/)") .. "?.lua"
local common = require("common")
done = common.done

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json"
wrk.body = '{"nome": "Caneca de bench", "descricao": "Criada pelo wrk", "preco": "29.90"}'
