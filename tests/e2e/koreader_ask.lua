-- The plugin's own client (folioclient.lua) over LuaSocket's real http, as the device runs it:
-- ask a question from a place in the book, then follow the first citation's xpointer back by
-- asking folio (people so far) from that xpointer, which folio places with its own parsing.
-- Environment: PLUGIN_DIR, FOLIO_URL, KO_USER, KO_KEY, KO_DOCUMENT, KO_PROGRESS, KO_PERCENTAGE,
-- KO_QUESTION. Prints one JSON object: { ok, answer | error, follow, screen }, where screen is the
-- answer's TextViewer ({ title, text }) as folioview.lua renders it.
local plugin = assert(os.getenv("PLUGIN_DIR"))
package.path = plugin .. "/spec/stubs/?.lua;" .. plugin .. "/?.lua;" .. package.path

local cjson = require("cjson")
local FolioClient = require("folioclient")
local FolioView = require("folioview")

local client = FolioClient:new{
    server_url = os.getenv("FOLIO_URL"),
    login = { username = os.getenv("KO_USER"), userkey = os.getenv("KO_KEY") },
}
local where = {
    document = os.getenv("KO_DOCUMENT"),
    progress = os.getenv("KO_PROGRESS"),
    percentage = tonumber(os.getenv("KO_PERCENTAGE")),
}

local out = {}
local question = os.getenv("KO_QUESTION")
local ok, result = client:ask(where, question)
out.ok = ok
if not ok then
    out.error = result
else
    out.answer = result
    out.screen = FolioView.answer(result, question)
    for _, c in ipairs(result.citations or {}) do
        if c.xpointer then
            local followed, there = client:people({ document = where.document, progress = c.xpointer })
            out.follow = { n = c.n, ok = followed, result = there }
            break
        end
    end
end
io.write(cjson.encode(out), "\n")
