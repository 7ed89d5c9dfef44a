local Dispatcher = require("dispatcher")
local FakeHttp = require("fakehttp")
local FakeReader = require("fakereader")
local FolioClient = require("folioclient")
local LuaSettings = require("luasettings")
local NetworkMgr = require("ui/network/manager")
local Trapper = require("ui/trapper")
local UIManager = require("ui/uimanager")
local screen = require("screen")

local Folio = require("main")

local KOSYNC_FILE = "/koreader/settings/kosync.lua"
local XP = "/body/DocFragment[11]/body/section/p[4]/text().20"
local DIGEST = "5d41402abc4b2a76b9719d911017c592"

local ANSWER = {
    answer = "**Henry Clerval** is Victor's friend from Geneva [1]. He nurses Victor [2].",
    conversation_id = "c1",
    book = { id = "b1", title = "Frankenstein" },
    position = { chapter = "Chapter 5", percentage = 0.2034, page = 45 },
    citations = {
        { n = 1, chapter = "Chapter 1", page = 12, quote = "Henry Clerval was the son of a merchant of Geneva.",
          xpointer = "/body/DocFragment[6]/body/section/p[9]/text().0", pdf_page = 12 },
        { n = 2, chapter = "Chapter 5", page = 44, quote = "I was lifeless.",
          xpointer = "/body/DocFragment[11]/body/section/p[2]/text().5", pdf_page = 44 },
    },
}

--- A reader with the Progress sync login set up (kosync's own settings file, as since v2026.07).
local function setup(opts)
    opts = opts or {}
    require("fresh")()
    LuaSettings.files[KOSYNC_FILE] = { settings = {
        custom_server = "http://192.168.1.10:8000",
        username = "reader",
        userkey = "0f1c3e2f9f8e0b6d5b4a3c2d1e0f9a8b",
    } }
    local fake = FakeHttp.new()
    FolioClient.request = fake.request
    local ui = FakeReader.new(opts)
    local plugin = Folio:new{ ui = ui, path = "plugins/folio.koplugin" }
    return plugin, ui, fake
end

local function menuItem(items, text)
    for _, item in ipairs(items) do
        local label = item.text_func and item.text_func() or item.text
        if label == text then return item end
    end
    error("no menu item " .. text)
end

--- Opens Ask folio › Ask a question…, types `question`, taps Ask.
local function askFromMenu(ui, question, entry)
    local menu = ui:mainMenu().folio
    menuItem(menu.sub_item_table, entry or "Ask a question…").callback()
    local dialog = UIManager:top()
    assert.are.equal("InputDialog", dialog.kind)
    dialog.typed = question
    screen.button(dialog, "Ask").callback()
end

describe("folio.koplugin", function()
    after_each(function() FolioClient.request = nil end)

    it("adds Ask folio to the main menu, two buttons to the selection popup and gesture actions", function()
        local _, ui = setup()

        assert.are.equal(1, #ui.menus)
        local menu = ui:mainMenu().folio
        assert.are.equal("Ask folio", menu.text)
        assert.are.equal("tools", menu.sorting_hint)
        local labels = {}
        for _, item in ipairs(menu.sub_item_table) do table.insert(labels, item.text) end
        assert.are.same({ "Ask a question…", "Ask in a new conversation…", "Story so far", "People so far",
            "Settings" }, labels)
        local this = ui:select("Clerval", XP)
        assert.are.equal("Who is this?", ui.highlight_buttons["12_folio_1_who"](this).text)
        assert.are.equal("Ask about this passage", ui.highlight_buttons["12_folio_2_passage"](this).text)
        assert.are.equal("FolioAsk", Dispatcher.actions.folio_ask.event)
        assert.are.equal("FolioStory", Dispatcher.actions.folio_story.event)
        assert.are.equal("FolioPeople", Dispatcher.actions.folio_people.event)
    end)

    it("asks with the digest and the xpointer of this moment, and shows the answer in a TextViewer", function()
        local _, ui, fake = setup()
        fake.respond(200, ANSWER)

        askFromMenu(ui, "Who is Clerval?")

        local req = fake.requests[1]
        assert.are.equal("http://192.168.1.10:8000/api/v1/koreader/ask", req.url)
        assert.are.equal("reader", req.headers["x-auth-user"])
        assert.are.same({ document = DIGEST, progress = XP, percentage = 0.2034, question = "Who is Clerval?" },
            req.body)
        assert.are.same({ "Asking folio…" }, Trapper.runs)
        assert.are.equal(table.concat({
            "┌─ TextViewer: Ask folio · Frankenstein",
            "│ through Chapter 5, p. 45 (20%)",
            "│ ",
            "│ Q: Who is Clerval?",
            "│ ",
            "│ Henry Clerval is Victor's friend from Geneva [1]. He nurses Victor [2].",
            "│ ",
            "│ Sources",
            "│ [1] Chapter 1, p. 12",
            "│     “Henry Clerval was the son of a merchant of Geneva.”",
            "│ [2] Chapter 5, p. 44",
            "│     “I was lifeless.”",
            "├─",
            "│ [ [1] p. 12 ] [ [2] p. 44 ]",
            "│ [ Follow-up ] [ New conversation ] [ Close ]",
            "└─",
        }, "\n"), screen.top())
    end)

    it("jumps to a citation's xpointer and Back returns to where the reader was", function()
        local _, ui, fake = setup()
        fake.respond(200, ANSWER)
        askFromMenu(ui, "Who is Clerval?")

        screen.button(UIManager:top(), "[1] p. 12").callback()

        assert.are.same({ XP }, ui.location_stack)
        local go = ui.events[#ui.events]
        assert.are.equal("GotoXPointer", go.name)
        assert.are.same({ ANSWER.citations[1].xpointer, ANSWER.citations[1].xpointer }, go.args)
        assert.are.equal(table.concat({
            "┌─ ButtonDialog: Cited: Chapter 1, p. 12",
            "│ ",
            "├─",
            "│ [ Back ] [ Answer ] [ Stay here ]",
            "└─",
        }, "\n"), screen.top())

        screen.button(UIManager:top(), "Back").callback()

        assert.are.equal("GoBackLink", ui.events[#ui.events].name)
        assert.are.equal(XP, ui.position.xpointer)
        assert.are.equal("TextViewer", UIManager:top().kind) -- the answer again, to follow another citation
        assert.are.equal(1, #UIManager.stack)
    end)

    it("continues the book's conversation, or starts a new one when asked", function()
        local _, ui, fake = setup()
        fake.respond(200, ANSWER)
        fake.respond(200, { answer = "In Ingolstadt.", conversation_id = "c1" })
        fake.respond(200, { answer = "A new start.", conversation_id = "c2" })

        askFromMenu(ui, "Who is Clerval?")
        screen.button(UIManager:top(), "Follow-up").callback()
        UIManager:top().typed = "Where does he study?"
        screen.button(UIManager:top(), "Ask").callback()
        screen.button(UIManager:top(), "New conversation").callback()
        UIManager:top().typed = "Who is Walton?"
        screen.button(UIManager:top(), "Ask").callback()

        assert.is_nil(fake.requests[1].body.conversation_id)
        assert.are.equal("c1", fake.requests[2].body.conversation_id)
        assert.is_true(fake.requests[3].body.new_conversation)
        assert.is_nil(fake.requests[3].body.conversation_id)
        assert.are.equal("c2", G_reader_settings:readSetting("folio").conversations[DIGEST])
    end)

    it("passes KOReader nightly's xpointers through unchanged, both ways", function()
        local nightly = "/body[1]/DocFragment[16]/body[1]/section[1]/p[1]/text()[1].0"
        local _, ui, fake = setup({ xpointer = nightly })
        local cited = "/body[1]/DocFragment[8]/body[1]/section[1]/p[5]/text()[1].744"
        fake.respond(200, { answer = "a [1]", citations = { { n = 1, page = 22, xpointer = cited } } })

        askFromMenu(ui, "Q?", "Ask in a new conversation…")
        screen.button(UIManager:top(), "[1] p. 22").callback()

        assert.are.equal(nightly, fake.requests[1].body.progress)
        assert.is_true(fake.requests[1].body.new_conversation)
        assert.are.same({ cited, cited }, ui.events[#ui.events].args)
    end)

    it("in a PDF sends the page and jumps with GotoPage", function()
        local _, ui, fake = setup({ paged = true, page = 45, file = "/mnt/onboard/Books/frankenstein.pdf" })
        fake.respond(200, ANSWER)

        askFromMenu(ui, "Who is Clerval?")

        assert.are.equal("45", fake.requests[1].body.progress)
        screen.button(UIManager:top(), "[2] p. 44").callback()
        assert.are.equal("GotoPage", ui.events[#ui.events].name)
        assert.are.same({ 44 }, ui.events[#ui.events].args)
        assert.are.same({ 45 }, ui.location_stack)
    end)

    it("asks 'Who is this?' about a selection from the selection's end", function()
        local _, ui, fake = setup()
        fake.respond(200, ANSWER)
        local selection_end = "/body/DocFragment[11]/body/section/p[6]/text().41"
        local this = ui:select("  Clerval\n", selection_end)

        ui.highlight_buttons["12_folio_1_who"](this).callback()

        assert.is_true(this.closed())
        assert.are.equal("Who is Clerval?", fake.requests[1].body.question)
        assert.are.equal(selection_end, fake.requests[1].body.progress)
    end)

    it("asks about a passage with the passage quoted in the dialog and the question", function()
        local _, ui, fake = setup()
        fake.respond(200, ANSWER)
        local this = ui:select("I beheld the wretch", XP)

        ui.highlight_buttons["12_folio_2_passage"](this).callback()
        local dialog = UIManager:top()
        dialog.typed = "Who is the wretch?"

        assert.are.equal(table.concat({
            "┌─ InputDialog: Ask folio",
            "│ About: “I beheld the wretch”",
            "│ > Who is the wretch?",
            "├─",
            "│ [ Cancel ] [ Ask ]",
            "└─",
        }, "\n"), screen.top())
        screen.button(dialog, "Ask").callback()
        assert.are.equal("About this passage: “I beheld the wretch”\nWho is the wretch?",
            fake.requests[1].body.question)
    end)

    it("shows the story so far and the people so far, whose buttons open where each was met", function()
        local _, ui, fake = setup()
        fake.respond(200, { text = "Victor leaves Geneva [1].", book = { title = "Frankenstein" },
            position = { chapter = "Chapter 5", percentage = 0.2, page = 45 },
            citations = { { n = 1, chapter = "Chapter 3", page = 25, quote = "I left Geneva.", xpointer = "/s.0" } } })
        fake.respond(200, { people = { { name = "Henry Clerval", aliases = { "Clerval" }, mentions = 40,
            introduced = { chapter = "Chapter 1", page = 12, quote = "Henry Clerval", xpointer = "/p.0" } } },
            book = { title = "Frankenstein" }, position = { chapter = "Chapter 5", percentage = 0.2, page = 45 } })
        local menu = ui:mainMenu().folio.sub_item_table

        menuItem(menu, "Story so far").callback()
        assert.are.equal("/api/v1/koreader/story", fake.requests[1].url:match("/api.*"))
        assert.truthy(screen.top():find("Story so far · Frankenstein", 1, true))
        assert.truthy(screen.top():find("[ [1] p. 25 ]", 1, true))

        menuItem(menu, "People so far").callback()
        assert.are.same({ document = DIGEST, progress = XP, percentage = 0.2034 }, fake.requests[2].body)
        assert.truthy(screen.top():find("• Henry Clerval (also Clerval) — 40 mentions", 1, true))
        screen.button(UIManager:top(), "Henry Clerval").callback()
        assert.are.same({ "/p.0", "/p.0" }, ui.events[#ui.events].args)
    end)
end)

describe("folio.koplugin messages", function()
    after_each(function() FolioClient.request = nil end)

    local function message()
        local top = UIManager:top()
        assert.are.equal("InfoMessage", top.kind)
        return top.text
    end

    it("names the file to add when folio does not know the book", function()
        local _, ui, fake = setup()
        fake.respond(404, { error = { code = "BOOK_NOT_FOUND", message = "No book with this digest" } })
        askFromMenu(ui, "Who is Clerval?")
        assert.are.equal("This book is not in your folio library.\nAdd this book to folio: Frankenstein.epub\n"
            .. "(folio knows a book by its file, so add the same file you read here.)", message())
    end)

    it("says the login was refused", function()
        local _, ui, fake = setup()
        fake.respond(401, { error = { code = "UNAUTHORIZED", message = "Wrong sync login" } })
        askFromMenu(ui, "Q?")
        assert.are.equal("folio refused the login (HTTP 401).\n"
            .. "Check the sync login or the token in Ask folio › Settings.", message())
    end)

    it("says the server cannot be reached, or did not answer in time", function()
        local _, ui, fake = setup()
        fake.fail("connection refused")
        fake.fail("timeout")
        askFromMenu(ui, "Q?")
        assert.are.equal("Cannot reach folio at http://192.168.1.10:8000.\n"
            .. "Check Wi-Fi and the server address (connection refused).", message())
        askFromMenu(ui, "Q?")
        assert.are.equal("folio at http://192.168.1.10:8000 did not answer within 90 seconds.\n"
            .. "Try again, or ask a shorter question.", message())
    end)

    it("says when folio is busy, with its Retry-After", function()
        local _, ui, fake = setup()
        fake.respond(429, { error = { code = "rate_limited", message = "x" } }, { ["retry-after"] = "30" })
        askFromMenu(ui, "Q?")
        assert.are.equal("folio is busy. Try again in 30 seconds.", message())
    end)

    it("forgets a conversation folio no longer has", function()
        local _, ui, fake = setup()
        G_reader_settings:saveSetting("folio", { conversations = { [DIGEST] = "gone" } })
        local plugin = Folio:new{ ui = ui }
        fake.respond(404, { error = { code = "NOT_FOUND", message = "x" } })
        plugin:ask("Q?")
        assert.are.equal("gone", fake.requests[1].body.conversation_id)
        assert.truthy(message():find("That conversation no longer exists", 1, true))
        assert.is_nil(G_reader_settings:readSetting("folio").conversations[DIGEST])
    end)

    it("asks for settings before any request when there is no server or no login", function()
        local _, ui, fake = setup()
        LuaSettings.files[KOSYNC_FILE] = nil
        local plugin = Folio:new{ ui = ui }
        plugin:ask("Q?")
        assert.are.equal("folio's address is not set.\nSet it in Ask folio › Settings › Server address.", message())
        plugin.settings:setServerUrl("http://folio.lan:8000")
        plugin:ask("Q?")
        assert.truthy(message():find("No login for folio", 1, true))
        assert.are.equal(0, #fake.requests)
    end)

    it("waits for Wi-Fi, then asks from the position of the moment it was asked", function()
        local plugin, ui, fake = setup()
        fake.respond(200, ANSWER)
        NetworkMgr.online = false

        plugin:ask("Q?")
        assert.are.equal(0, #fake.requests)
        ui.position.xpointer = "/body/DocFragment[30].0" -- the reader turns pages meanwhile
        NetworkMgr:goOnline()

        assert.are.equal(XP, fake.requests[1].body.progress)
        assert.are.equal("TextViewer", UIManager:top().kind)
    end)

    it("tells the reader a dismissed request was cancelled", function()
        local plugin, _, fake = setup()
        Trapper.dismiss_next = true
        plugin:ask("Q?")
        assert.are.equal(0, #fake.requests)
        assert.are.equal("Request to folio cancelled.", message())
    end)
end)

describe("folio.koplugin settings", function()
    after_each(function() FolioClient.request = nil end)

    local function settingsMenu(ui)
        return menuItem(ui:mainMenu().folio.sub_item_table, "Settings").sub_item_table
    end

    it("defaults to the Progress sync server and login", function()
        local _, ui = setup()
        local items = settingsMenu(ui)
        assert.truthy(menuItem(items, "Server address: http://192.168.1.10:8000"))
        assert.is_true(menuItem(items, "Use the Progress sync login (reader)").checked_func())
    end)

    it("reads a login kept in G_reader_settings by KOReader before v2026.07", function()
        local plugin = setup()
        LuaSettings.files[KOSYNC_FILE] = nil
        G_reader_settings:saveSetting("kosync", { username = "old", userkey = "k" })
        assert.are.same({ username = "old", userkey = "k" }, plugin.settings:login())
    end)

    it("prefers the running Progress sync plugin's login, which may not be flushed yet", function()
        local _, ui = setup()
        ui.kosync = { settings = { username = "fresh", userkey = "k2" } }
        local plugin = Folio:new{ ui = ui }
        assert.are.same({ username = "fresh", userkey = "k2" }, plugin.settings:login())
    end)

    it("keeps the server address and a token in KOReader's settings across a restart", function()
        local _, ui, fake = setup()
        local items = settingsMenu(ui)
        menuItem(items, "Server address: http://192.168.1.10:8000").callback()
        local dialog = UIManager:top()
        dialog.typed = "not a url"
        screen.button(dialog, "Save").callback()
        assert.are.equal("The address must start with http:// or https://", UIManager:top().text)
        dialog.typed = " https://folio.example.org/ "
        screen.button(dialog, "Save").callback()
        menuItem(items, "Use a folio token…").callback()
        UIManager:top().typed = "tok-123"
        screen.button(UIManager:top(), "Save").callback()
        G_reader_settings:flush()

        -- KOReader restarts: settings are read back from the file
        _G.G_reader_settings = LuaSettings:open("/koreader/settings.reader.lua")
        local restarted = Folio:new{ ui = FakeReader.new() }
        assert.are.equal("https://folio.example.org", restarted.settings:serverUrl())
        assert.are.equal("token", restarted.settings:authMode())
        fake.respond(200, ANSWER)
        restarted:ask("Q?")
        assert.are.equal("https://folio.example.org/api/v1/koreader/ask", fake.requests[1].url)
        assert.are.equal("Bearer tok-123", fake.requests[1].headers["authorization"])
    end)
end)
