-- A stand-in for LuaSocket's http.request(table): records each request (url, method, headers,
-- decoded JSON body) and answers with the next queued response, written into the caller's sink.
local cjson = require("cjson")
local ltn12 = require("ltn12")

local FakeHttp = {}

function FakeHttp.new()
    local fake = { requests = {}, responses = {} }

    --- Queues an answer: status, body (a table is sent as JSON, a string as is), headers;
    -- or { fail = "timeout" } for a network failure.
    function fake.respond(status, body, headers)
        table.insert(fake.responses, { status = status, body = body, headers = headers })
    end

    function fake.fail(reason)
        table.insert(fake.responses, { fail = reason })
    end

    function fake.request(req)
        local chunks = {}
        if req.source then ltn12.pump.all(req.source, (ltn12.sink.table(chunks))) end
        local raw = table.concat(chunks)
        table.insert(fake.requests, {
            url = req.url, method = req.method, headers = req.headers, raw = raw,
            body = raw ~= "" and cjson.decode(raw) or nil,
        })
        local r = table.remove(fake.responses, 1) or { status = 500, body = "no response queued" }
        if r.fail then return nil, r.fail end
        local body = type(r.body) == "table" and cjson.encode(r.body) or r.body or ""
        req.sink(body)
        req.sink(nil)
        return 1, r.status, r.headers or { ["content-type"] = "application/json" }, "HTTP/1.1 " .. r.status
    end

    return fake
end

return FakeHttp
