--[[--
HTTP client of folio's KOReader routes (`/api/v1/koreader/ask`, `/story`, `/people`).

Pure: it builds the request, sends it through one request function (LuaSocket's, or the one a
test gives it), and turns every outcome into `true, body` or `false, err`, where `err` is a plain
table `{ kind = ..., status = ..., code = ..., message = ..., retry_after = ... }`. It never
shows anything and never raises, so it can run in a Trapper subprocess and its results cross
the pipe as plain Lua values (JSON nulls are dropped, never returned as userdata or functions).

@module folioclient
]]

local JSON = require("json")
local logger = require("logger")
local ltn12 = require("ltn12")
local socketutil = require("socketutil")

-- Seconds: {block, total} for socketutil:set_timeout. An answer is written by a model on the
-- server before its first byte, so the block timeout is the one that matters.
local ASK_TIMEOUTS = { 60, 90 }
local READ_TIMEOUTS = { 30, 45 }

local FolioClient = {
    server_url = nil,
    -- { username = ..., userkey = ... } (KOReader's sync login) or { token = ... }
    login = nil,
    -- function(request_table) -> code, headers, status (LuaSocket's http.request contract)
    request = nil,
}

function FolioClient:new(o)
    o = o or {}
    setmetatable(o, self)
    self.__index = self
    return o
end

FolioClient.ASK_TIMEOUTS = ASK_TIMEOUTS
FolioClient.READ_TIMEOUTS = READ_TIMEOUTS

--- The server's address without trailing slashes; nil when it is not an http(s) URL.
function FolioClient.normalizeUrl(url)
    if type(url) ~= "string" then return nil end
    url = url:gsub("^%s+", ""):gsub("%s+$", ""):gsub("/+$", "")
    if not url:match("^https?://[^/%s]+") then return nil end
    return url
end

function FolioClient:headers(body)
    local headers = {
        ["accept"] = "application/json",
        ["content-type"] = "application/json",
        ["content-length"] = tostring(#body),
    }
    local login = self.login or {}
    if login.token and login.token ~= "" then
        headers["authorization"] = "Bearer " .. login.token
    elseif login.username and login.userkey then
        headers["x-auth-user"] = login.username
        headers["x-auth-key"] = login.userkey
    end
    return headers
end

--- Drops what JSON's null decodes to (userdata, functions, cjson.null) so results are plain values.
local function plain(value)
    local kind = type(value)
    if kind == "table" then
        local out = {}
        for k, v in pairs(value) do
            out[k] = plain(v)
        end
        return out
    elseif kind == "string" or kind == "number" or kind == "boolean" then
        return value
    end
    return nil
end
FolioClient.plain = plain

local function decode(text)
    if type(text) ~= "string" or text:sub(1, 1) ~= "{" then return nil end
    local ok, value = pcall(JSON.decode, text)
    if ok and type(value) == "table" then return plain(value) end
    return nil
end

local function header(headers, name)
    for k, v in pairs(headers or {}) do
        if type(k) == "string" and k:lower() == name then return v end
    end
end

local TIMEOUT_CODES = {
    [socketutil.TIMEOUT_CODE or "timeout"] = true,
    [socketutil.SINK_TIMEOUT_CODE or "sink timeout"] = true,
    [socketutil.SSL_HANDSHAKE_CODE or "wantread"] = true,
}

--- Maps a network failure (LuaSocket's error string) to an error table.
local function networkError(reason)
    reason = tostring(reason or "no answer")
    if TIMEOUT_CODES[reason] or reason:find("timeout", 1, true) then
        return { kind = "timeout", message = reason }
    end
    return { kind = "unreachable", message = reason }
end

local KIND_BY_STATUS = {
    [400] = "invalid",
    [401] = "auth",
    [403] = "auth",
    [404] = "not_found",
    [413] = "invalid",
    [422] = "invalid",
    [429] = "rate_limited",
}

--- Maps an HTTP answer other than 200 to an error table. A 404 of a request that named a
-- conversation is that conversation gone, unless folio says it is the book it does not know.
local function httpError(code, headers, body, named_conversation)
    local err = { kind = KIND_BY_STATUS[code] or "server", status = code }
    local payload = decode(body)
    local detail = payload and payload.error
    if type(detail) == "table" then
        err.code = detail.code
        err.message = detail.message
    elseif type(detail) == "string" then
        err.message = detail
    elseif payload and type(payload.detail) == "string" then
        err.message = payload.detail
    end
    if code == 404 and not payload then
        -- No JSON: the server answered, but it is not a folio that has these routes.
        err.kind = "no_route"
    elseif code == 404 and named_conversation and err.code ~= "BOOK_NOT_FOUND" then
        err.kind = "conversation_gone"
    end
    if code == 429 then
        err.retry_after = tonumber(header(headers, "retry-after"))
    end
    return err
end

function FolioClient:defaultRequest()
    if self.server_url:match("^https://") then
        return require("ssl.https").request
    end
    return require("socket.http").request
end

--- POSTs `fields` as JSON to `path`; returns true, body or false, err.
function FolioClient:post(path, fields, timeouts)
    local base = FolioClient.normalizeUrl(self.server_url)
    if not base then
        return false, { kind = "no_server" }
    end
    local ok_encode, body = pcall(JSON.encode, fields)
    if not ok_encode then
        return false, { kind = "invalid", message = tostring(body) }
    end
    local sink = {}
    local request = {
        url = base .. path,
        method = "POST",
        headers = self:headers(body),
        source = ltn12.source.string(body),
        sink = socketutil.table_sink(sink),
    }
    logger.dbg("FolioClient: POST", request.url)
    socketutil:set_timeout(timeouts[1], timeouts[2])
    local send = self.request or self:defaultRequest()
    local ok_call, code, headers, status = pcall(function()
        local _, c, h, s = send(request)
        return c, h, s
    end)
    socketutil:reset_timeout()
    if not ok_call then
        logger.warn("FolioClient: request failed:", code)
        return false, networkError(code)
    end
    if headers == nil then
        return false, networkError(status or code)
    end
    local text = table.concat(sink)
    if code ~= 200 then
        logger.dbg("FolioClient: HTTP", code, text)
        return false, httpError(code, headers, text, fields.conversation_id ~= nil)
    end
    local payload = decode(text)
    if not payload then
        return false, { kind = "bad_response", status = code, message = text:sub(1, 200) }
    end
    return true, payload
end

--- The fields every request carries: which book, and where the reader is at this moment.
local function positionFields(where)
    return {
        document = where.document,
        progress = where.progress ~= nil and tostring(where.progress) or nil,
        percentage = where.percentage,
    }
end

--- Asks a question from `where` (document, progress, percentage).
-- @tparam table where position fields
-- @string question
-- @tparam[opt] table opts conversation_id, new_conversation
function FolioClient:ask(where, question, opts)
    opts = opts or {}
    local fields = positionFields(where)
    fields.question = question
    if opts.new_conversation then
        fields.new_conversation = true
    elseif opts.conversation_id then
        fields.conversation_id = opts.conversation_id
    end
    return self:post("/api/v1/koreader/ask", fields, ASK_TIMEOUTS)
end

function FolioClient:story(where)
    return self:post("/api/v1/koreader/story", positionFields(where), ASK_TIMEOUTS)
end

function FolioClient:people(where)
    return self:post("/api/v1/koreader/people", positionFields(where), READ_TIMEOUTS)
end

return FolioClient
