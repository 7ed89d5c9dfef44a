--[[--
Ask folio about the book you are reading, from KOReader.

Every request carries the book's digest (KOReader's partial MD5, as Progress sync sends it) and
the position at the moment it is made (the xpointer of a reflowable book, the page of a PDF), so
folio answers from what has been read here and now, never from a stale sync. Answers open in
KOReader's TextViewer with numbered citations; a citation jumps to its place in the book, with
the current place pushed on ReaderLink's location stack so that "Back" returns to it.

@module koplugin.folio
]]

local ButtonDialog = require("ui/widget/buttondialog")
local Dispatcher = require("dispatcher")
local Event = require("ui/event")
local InfoMessage = require("ui/widget/infomessage")
local InputDialog = require("ui/widget/inputdialog")
local NetworkMgr = require("ui/network/manager")
local TextViewer = require("ui/widget/textviewer")
local Trapper = require("ui/trapper")
local UIManager = require("ui/uimanager")
local WidgetContainer = require("ui/widget/container/widgetcontainer")
local FolioClient = require("folioclient")
local FolioMessages = require("foliomessages")
local FolioSettings = require("foliosettings")
local FolioSettingsMenu = require("foliosettingsmenu")
local FolioView = require("folioview")
local logger = require("logger")
local util = require("util")
local T = require("ffi/util").template
local _ = require("gettext")

local Folio = WidgetContainer:extend{
    name = "folio",
    is_doc_only = true,
}

function Folio:init()
    self.settings = FolioSettings:new{
        live_kosync = function()
            return self.ui.kosync and self.ui.kosync.settings
        end,
    }
    self.ui.menu:registerToMainMenu(self)
    if self.ui.highlight then
        self:addToHighlightDialog()
    end
    self:onDispatcherRegisterActions()
end

function Folio:onDispatcherRegisterActions()
    Dispatcher:registerAction("folio_ask", { category = "none", event = "FolioAsk", title = _("Ask folio"), reader = true })
    Dispatcher:registerAction("folio_story", { category = "none", event = "FolioStory", title = _("folio: story so far"), reader = true })
    Dispatcher:registerAction("folio_people", { category = "none", event = "FolioPeople", title = _("folio: people so far"), reader = true })
end

function Folio:isPaged()
    return self.ui.document.info.has_pages and true or false
end

--- The book's digest: the one KOReader keeps in the book's settings (Progress sync sends it too).
function Folio:documentDigest()
    local digest = self.ui.doc_settings and self.ui.doc_settings:readSetting("partial_md5_checksum")
    return digest or util.partialMD5(self.ui.document.file)
end

function Folio:fileName()
    local _path, name = util.splitFilePathName(self.ui.document.file or "")
    return name
end

--- Where the reader is now: { document, progress, percentage }. A selection moves the position to
-- the selection's end (it is on the page being read), so that the passage itself is read.
function Folio:position(selection)
    local where = { document = self:documentDigest() }
    if self:isPaged() then
        local page = selection and selection.pos1 and selection.pos1.page
        where.progress = tostring(page or self.ui.paging:getLastProgress())
        where.percentage = self.ui.paging:getLastPercent()
    else
        local xp = selection and type(selection.pos1) == "string" and selection.pos1
        where.progress = xp or self.ui.rolling:getLastProgress()
        where.percentage = self.ui.rolling:getLastPercent()
    end
    return where
end

function Folio:showMessage(text, timeout)
    UIManager:show(InfoMessage:new{ text = text, timeout = timeout })
end

function Folio:showError(err, timeout)
    self:showMessage(FolioMessages.describe(err, {
        server_url = self.settings:serverUrl(),
        file_name = self:fileName(),
        timeout = timeout,
    }))
end

--- Runs one request off the UI: the network is brought up first (the call is re-run once online),
-- and the request runs in a subprocess the reader can dismiss by tapping.
-- @string waiting what the reader sees meanwhile
-- @tparam func call (client) -> ok, result
-- @tparam table timeouts the call's {block, total} seconds (for the timeout message)
-- @tparam func on_result (result)
-- @tparam[opt] func on_error (err) -> true when handled
function Folio:request(waiting, call, timeouts, on_result, on_error)
    local server_url = FolioClient.normalizeUrl(self.settings:serverUrl())
    if not server_url then
        return self:showError({ kind = "no_server" })
    end
    local login = self.settings:login()
    if not login then
        return self:showError({ kind = "no_login" })
    end
    if NetworkMgr:willRerunWhenOnline(function() self:request(waiting, call, timeouts, on_result, on_error) end) then
        return
    end
    local client = FolioClient:new{ server_url = server_url, login = login }
    Trapper:wrap(function()
        local completed, ok, result = Trapper:dismissableRunInSubprocess(function()
            return call(client)
        end, waiting)
        if not completed then
            self:showMessage(_("Request to folio cancelled."), 2)
            return
        end
        if ok and type(result) == "table" then
            return on_result(result)
        end
        local err = type(result) == "table" and result or { kind = "unreachable", message = tostring(result) }
        logger.warn("folio: request failed:", err.kind, err.status, err.message)
        if not (on_error and on_error(err)) then
            self:showError(err, timeouts[2])
        end
    end)
end

--- Asks `question` from `where` (now, when not given); continues the book's conversation unless
-- `opts.new_conversation`.
function Folio:ask(question, opts)
    opts = opts or {}
    question = util.trim(question or "")
    if question == "" then return end
    local where = opts.where or self:position()
    local conversation_id = not opts.new_conversation and self.settings:conversation(where.document) or nil
    self:request(_("Asking folio…"), function(client)
        return client:ask(where, question, {
            conversation_id = conversation_id,
            new_conversation = opts.new_conversation,
        })
    end, FolioClient.ASK_TIMEOUTS, function(result)
        if result.conversation_id then
            self.settings:setConversation(where.document, result.conversation_id)
        end
        self:showAnswer(result, question)
    end, function(err)
        if err.kind == "conversation_gone" then
            self.settings:setConversation(where.document, nil)
        end
    end)
end

function Folio:onFolioStory()
    local where = self:position()
    self:request(_("Asking folio for the story so far…"), function(client)
        return client:story(where)
    end, FolioClient.ASK_TIMEOUTS, function(result)
        self:showViewer(FolioView.story(result),
            FolioView.citationRows(result.citations, self:isPaged(), self:jumper()))
    end)
    return true
end

function Folio:onFolioPeople()
    local where = self:position()
    self:request(_("Asking folio who is in the book so far…"), function(client)
        return client:people(where)
    end, FolioClient.READ_TIMEOUTS, function(result)
        self:showViewer(FolioView.people(result),
            FolioView.peopleRows(result.people, self:isPaged(), self:jumper()))
    end)
    return true
end

function Folio:onFolioAsk()
    self:showAskDialog()
    return true
end

function Folio:showAnswer(result, question)
    local rows = FolioView.citationRows(result.citations, self:isPaged(), self:jumper())
    self:showViewer(FolioView.answer(result, question), rows, {
        {
            text = _("Follow-up"),
            callback = function()
                UIManager:close(self.viewer)
                self:showAskDialog()
            end,
        },
        {
            text = _("New conversation"),
            callback = function()
                UIManager:close(self.viewer)
                self:showAskDialog({ new_conversation = true })
            end,
        },
    })
end

--- Shows `screen` ({title, text}) in a TextViewer, with `rows` of jump buttons and `extra` controls.
function Folio:showViewer(screen, rows, extra)
    local buttons = {}
    for _i, row in ipairs(rows or {}) do
        table.insert(buttons, row)
    end
    local controls = {}
    for _i, button in ipairs(extra or {}) do
        table.insert(controls, button)
    end
    table.insert(controls, {
        text = _("Close"),
        callback = function() UIManager:close(self.viewer) end,
    })
    table.insert(buttons, controls)
    self.viewer = TextViewer:new{
        title = screen.title,
        text = screen.text,
        text_type = "lookup",
        buttons_table = buttons,
    }
    self.reopen = function()
        self:showViewer(screen, rows, extra)
    end
    UIManager:show(self.viewer)
end

--- The callback of a citation button: (item, target) -> jump, then offer the way back.
function Folio:jumper()
    return function(item, target)
        if target then self:jumpTo(item, target) end
    end
end

function Folio:jumpTo(item, target)
    local reopen = self.reopen
    UIManager:close(self.viewer)
    self.ui.link:addCurrentLocationToStack()
    if target.page then
        self.ui:handleEvent(Event:new("GotoPage", target.page))
    else
        self.ui:handleEvent(Event:new("GotoXPointer", target.xpointer, target.xpointer))
    end
    local dialog
    dialog = ButtonDialog:new{
        title = T(_("Cited: %1"), FolioView.place(item)),
        buttons = {{
            {
                text = _("Back"),
                callback = function()
                    UIManager:close(dialog)
                    self.ui:handleEvent(Event:new("GoBackLink"))
                    if reopen then reopen() end
                end,
            },
            {
                text = _("Answer"),
                callback = function()
                    UIManager:close(dialog)
                    if reopen then reopen() end
                end,
            },
            {
                text = _("Stay here"),
                callback = function() UIManager:close(dialog) end,
            },
        }},
    }
    UIManager:show(dialog)
end

--- The question dialog. `opts.passage`: a selected passage the question is about;
-- `opts.where`: the position taken with the selection; `opts.new_conversation`.
function Folio:showAskDialog(opts)
    opts = opts or {}
    local description
    if opts.passage then
        description = T(_("About: “%1”"), FolioView.shorten(opts.passage, 200))
    elseif opts.new_conversation then
        description = _("A new conversation about this book.")
    end
    local dialog
    dialog = InputDialog:new{
        title = _("Ask folio"),
        description = description,
        input_hint = _("What happened to…? Who is…?"),
        buttons = {{
            {
                text = _("Cancel"),
                id = "close",
                callback = function() UIManager:close(dialog) end,
            },
            {
                text = _("Ask"),
                is_enter_default = true,
                callback = function()
                    local question = util.trim(dialog:getInputText() or "")
                    if question == "" then return end
                    UIManager:close(dialog)
                    if opts.passage then
                        question = T(_("About this passage: “%1”\n%2"), FolioView.shorten(opts.passage, 1000), question)
                    end
                    self:ask(question, { where = opts.where, new_conversation = opts.new_conversation })
                end,
            },
        }},
    }
    UIManager:show(dialog)
    dialog:onShowKeyboard()
end

function Folio:addToHighlightDialog()
    -- "12_f…" sorts before "12_search", which stays the dialog's last button.
    self.ui.highlight:addToHighlightDialog("12_folio_1_who", function(this)
        return {
            text = _("Who is this?"),
            callback = function()
                local text = util.cleanupSelectedText(this.selected_text.text)
                local where = self:position(this.selected_text)
                this:onClose()
                self:ask(T(_("Who is %1?"), FolioView.shorten(text, 120)), { where = where })
            end,
        }
    end)
    self.ui.highlight:addToHighlightDialog("12_folio_2_passage", function(this)
        return {
            text = _("Ask about this passage"),
            callback = function()
                local text = util.cleanupSelectedText(this.selected_text.text)
                local where = self:position(this.selected_text)
                this:onClose()
                self:showAskDialog({ passage = text, where = where })
            end,
        }
    end)
end

function Folio:addToMainMenu(menu_items)
    menu_items.folio = {
        text = _("Ask folio"),
        sorting_hint = "tools",
        sub_item_table = {
            {
                text = _("Ask a question…"),
                callback = function() self:showAskDialog() end,
            },
            {
                text = _("Ask in a new conversation…"),
                callback = function() self:showAskDialog({ new_conversation = true }) end,
            },
            {
                text = _("Story so far"),
                callback = function() self:onFolioStory() end,
            },
            {
                text = _("People so far"),
                callback = function() self:onFolioPeople() end,
                separator = true,
            },
            {
                text = _("Settings"),
                sub_item_table = FolioSettingsMenu.items(self.settings),
            },
        },
    }
end

return Folio
