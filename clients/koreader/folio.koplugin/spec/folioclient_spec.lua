local FakeHttp = require("fakehttp")
local FolioClient = require("folioclient")
local socketutil = require("socketutil")

local XP = "/body/DocFragment[11]/body/section/p[4]/text().20"
local DIGEST = "5d41402abc4b2a76b9719d911017c592"
local WHERE = { document = DIGEST, progress = XP, percentage = 0.2034 }

local function client(fake, login)
    return FolioClient:new{
        server_url = "http://192.168.1.10:8000/",
        login = login or { username = "reader", userkey = "0f1c3e2f9f8e0b6d5b4a3c2d1e0f9a8b" },
        request = fake.request,
    }
end

describe("FolioClient requests", function()
    before_each(require("fresh"))

    it("posts the question with the digest, the xpointer and the sync login headers", function()
        local fake = FakeHttp.new()
        fake.respond(200, { answer = "He is Victor's friend [1].", conversation_id = "c1" })

        local ok, result = client(fake):ask(WHERE, "Who is Clerval?", { conversation_id = "c0" })

        assert.is_true(ok)
        assert.are.equal("He is Victor's friend [1].", result.answer)
        local req = fake.requests[1]
        assert.are.equal("http://192.168.1.10:8000/api/v1/koreader/ask", req.url)
        assert.are.equal("POST", req.method)
        assert.are.equal("reader", req.headers["x-auth-user"])
        assert.are.equal("0f1c3e2f9f8e0b6d5b4a3c2d1e0f9a8b", req.headers["x-auth-key"])
        assert.is_nil(req.headers["authorization"])
        assert.are.equal("application/json", req.headers["content-type"])
        assert.are.equal(tostring(#req.raw), req.headers["content-length"])
        assert.are.same({
            document = DIGEST,
            progress = XP,
            percentage = 0.2034,
            question = "Who is Clerval?",
            conversation_id = "c0",
        }, req.body)
    end)

    it("sends a PDF's page as a string and a token as a bearer header", function()
        local fake = FakeHttp.new()
        fake.respond(200, { answer = "x" })

        client(fake, { token = "tok-123" }):ask({ document = DIGEST, progress = 45, percentage = 0.3 }, "Q?",
            { conversation_id = "c0", new_conversation = true })

        local req = fake.requests[1]
        assert.are.equal("Bearer tok-123", req.headers["authorization"])
        assert.is_nil(req.headers["x-auth-user"])
        assert.are.equal("45", req.body.progress)
        assert.is_true(req.body.new_conversation)
        assert.is_nil(req.body.conversation_id) -- a new conversation does not name the old one
    end)

    it("asks the story and the people with the position only", function()
        local fake = FakeHttp.new()
        fake.respond(200, { text = "So far..." })
        fake.respond(200, { people = {} })
        local c = client(fake)

        assert.is_true((c:story(WHERE)))
        assert.is_true((c:people(WHERE)))

        assert.are.equal("http://192.168.1.10:8000/api/v1/koreader/story", fake.requests[1].url)
        assert.are.equal("http://192.168.1.10:8000/api/v1/koreader/people", fake.requests[2].url)
        assert.are.same(WHERE, fake.requests[1].body)
        assert.are.same(WHERE, fake.requests[2].body)
    end)

    it("sets socketutil's timeouts for the request and resets them after", function()
        local fake = FakeHttp.new()
        fake.respond(200, { answer = "x" })
        socketutil.history = {}

        client(fake):ask(WHERE, "Q?")

        assert.are.same({ FolioClient.ASK_TIMEOUTS, "reset" }, socketutil.history)
    end)

    it("drops JSON nulls, so results cross Trapper's subprocess pipe as plain values", function()
        local fake = FakeHttp.new()
        fake.respond(200, '{"answer":"a","citations":[{"n":1,"xpointer":null,"pdf_page":null,"page":3}]}')

        local ok, result = client(fake):ask(WHERE, "Q?")

        assert.is_true(ok)
        assert.is_nil(result.citations[1].xpointer)
        assert.are.equal(3, result.citations[1].page)
    end)
end)

describe("FolioClient errors", function()
    before_each(require("fresh"))

    local function fails(status, body, headers, opts)
        local fake = FakeHttp.new()
        if type(status) == "string" then fake.fail(status) else fake.respond(status, body, headers) end
        local ok, err = client(fake):ask(WHERE, "Q?", opts)
        assert.is_false(ok)
        return err
    end

    it("maps folio's statuses and error bodies", function()
        local e401 = fails(401, { error = { code = "UNAUTHORIZED", message = "Wrong sync login" } })
        assert.are.same({ kind = "auth", status = 401, code = "UNAUTHORIZED", message = "Wrong sync login" }, e401)
        local unknown_book = { error = { code = "BOOK_NOT_FOUND", message = "x" } }
        assert.are.equal("not_found", fails(404, unknown_book).kind)
        assert.are.equal("not_found", fails(404, unknown_book, nil, { conversation_id = "c0" }).kind)
        assert.are.equal("conversation_gone",
            fails(404, { error = { code = "NOT_FOUND", message = "x" } }, nil, { conversation_id = "c0" }).kind)
        local e422 = fails(422, { error = { code = "INVALID_POSITION", message = "bad xpointer" } })
        assert.are.same({ kind = "invalid", status = 422, code = "INVALID_POSITION", message = "bad xpointer" }, e422)
        local e429 = fails(429, { error = { code = "rate_limited", message = "slow down" } }, { ["Retry-After"] = "12" })
        assert.are.equal("rate_limited", e429.kind)
        assert.are.equal(12, e429.retry_after)
        assert.are.equal("server", fails(500, "Internal Server Error").kind)
    end)

    it("tells a server without folio's routes from an unknown book", function()
        assert.are.equal("no_route", fails(404, "<html>Not Found</html>").kind)
    end)

    it("maps network failures and timeouts", function()
        assert.are.same({ kind = "timeout", message = "timeout" }, fails("timeout"))
        assert.are.same({ kind = "timeout", message = "sink timeout" }, fails("sink timeout"))
        assert.are.same({ kind = "unreachable", message = "connection refused" }, fails("connection refused"))
        assert.are.same({ kind = "unreachable", message = "host or service not provided, or not known" },
            fails("host or service not provided, or not known"))
    end)

    it("reports an answer that is not JSON", function()
        assert.are.equal("bad_response", fails(200, "<html>captive portal</html>").kind)
    end)

    it("refuses a missing or malformed server address before any request", function()
        local fake = FakeHttp.new()
        local c = FolioClient:new{ server_url = "folio.local", login = {}, request = fake.request }
        local ok, err = c:ask(WHERE, "Q?")
        assert.is_false(ok)
        assert.are.equal("no_server", err.kind)
        assert.are.equal(0, #fake.requests)
        assert.are.equal("https://folio.example.org", FolioClient.normalizeUrl("  https://folio.example.org// "))
    end)

    it("turns an exception in the transport into a network error", function()
        local c = FolioClient:new{
            server_url = "http://x", login = {},
            request = function() error("closed") end,
        }
        local ok, err = c:ask(WHERE, "Q?")
        assert.is_false(ok)
        assert.are.equal("unreachable", err.kind)
    end)
end)
