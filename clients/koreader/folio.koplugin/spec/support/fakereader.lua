-- A ReaderUI as far as the plugin sees it: the document (reflowable or paged), its settings with
-- the digest, ReaderRolling / ReaderPaging positions, the menu, the highlight dialog, ReaderLink's
-- location stack, and handleEvent, which records the events sent (GotoXPointer, GotoPage, ...).
local FakeReader = {}

function FakeReader.new(opts)
    opts = opts or {}
    local ui = {
        events = {},
        menus = {},
        highlight_buttons = {},
        location_stack = {},
        document = {
            file = opts.file or "/mnt/onboard/Books/Frankenstein.epub",
            info = { has_pages = opts.paged or false },
        },
        position = { xpointer = opts.xpointer or "/body/DocFragment[11]/body/section/p[4]/text().20",
                     page = opts.page or 12, percentage = opts.percentage or 0.2034 },
    }
    ui.doc_settings = {
        data = { partial_md5_checksum = opts.digest or "5d41402abc4b2a76b9719d911017c592" },
        readSetting = function(self, key) return self.data[key] end,
    }
    ui.rolling = {
        getLastProgress = function() return ui.position.xpointer end,
        getLastPercent = function() return ui.position.percentage end,
    }
    ui.paging = {
        getLastProgress = function() return ui.position.page end,
        getLastPercent = function() return ui.position.percentage end,
    }
    if opts.paged then ui.rolling = nil else ui.paging = nil end
    ui.menu = {
        registerToMainMenu = function(_, plugin) table.insert(ui.menus, plugin) end,
    }
    ui.highlight = {
        addToHighlightDialog = function(_, idx, fn) ui.highlight_buttons[idx] = fn end,
    }
    ui.link = {
        addCurrentLocationToStack = function()
            table.insert(ui.location_stack, ui.document.info.has_pages and ui.position.page or ui.position.xpointer)
        end,
    }
    function ui:handleEvent(event)
        table.insert(self.events, event)
        if event.name == "GotoXPointer" then self.position.xpointer = event.args[1] end
        if event.name == "GotoPage" then self.position.page = event.args[1] end
        if event.name == "GoBackLink" then
            local back = table.remove(self.location_stack)
            if self.document.info.has_pages then self.position.page = back else self.position.xpointer = back end
        end
        return true
    end
    --- The main menu the plugin adds, as KOReader's TouchMenu would build it.
    function ui:mainMenu()
        local items = {}
        for _, plugin in ipairs(self.menus) do plugin:addToMainMenu(items) end
        return items
    end
    --- A selection, as ReaderHighlight holds it, and the dialog's button `idx` for it.
    function ui:select(text, pos1)
        local closed = false
        local this = {
            selected_text = { text = text, pos0 = pos1, pos1 = pos1 },
            onClose = function() closed = true end,
            closed = function() return closed end,
        }
        return this
    end
    return ui
end

return FakeReader
