--[[--
Ask folio › Settings: the server's address and the login (the Progress sync login, or a token),
edited in KOReader's own dialogs and kept through FolioSettings.

@module foliosettingsmenu
]]

local FolioClient = require("folioclient")
local InfoMessage = require("ui/widget/infomessage")
local InputDialog = require("ui/widget/inputdialog")
local UIManager = require("ui/uimanager")
local T = require("ffi/util").template
local _ = require("gettext")

local FolioSettingsMenu = {}

local function editServer(settings, touchmenu_instance)
    local dialog
    dialog = InputDialog:new{
        title = _("folio server address"),
        input = settings:serverUrl() or "http://",
        input_hint = "http://192.168.1.10:8000",
        buttons = {{
            {
                text = _("Cancel"),
                id = "close",
                callback = function() UIManager:close(dialog) end,
            },
            {
                text = _("Save"),
                is_enter_default = true,
                callback = function()
                    local url = dialog:getInputText()
                    if url ~= "" and not FolioClient.normalizeUrl(url) then
                        UIManager:show(InfoMessage:new{
                            text = _("The address must start with http:// or https://"),
                            timeout = 3,
                        })
                        return
                    end
                    settings:setServerUrl(url)
                    UIManager:close(dialog)
                    if touchmenu_instance then touchmenu_instance:updateItems() end
                end,
            },
        }},
    }
    UIManager:show(dialog)
    dialog:onShowKeyboard()
end

local function editToken(settings, touchmenu_instance)
    local dialog
    dialog = InputDialog:new{
        title = _("folio API token"),
        description = _("On the server: folio users add <name> (or rotate) prints it."),
        text_type = "password",
        buttons = {{
            {
                text = _("Cancel"),
                id = "close",
                callback = function() UIManager:close(dialog) end,
            },
            {
                text = _("Save"),
                is_enter_default = true,
                callback = function()
                    settings:setToken(dialog:getInputText())
                    settings:setAuthMode(settings:hasToken() and "token" or "sync")
                    UIManager:close(dialog)
                    if touchmenu_instance then touchmenu_instance:updateItems() end
                end,
            },
        }},
    }
    UIManager:show(dialog)
    dialog:onShowKeyboard()
end

--- The items of Ask folio › Settings, on `settings` (a FolioSettings).
function FolioSettingsMenu.items(settings)
    return {
        {
            text_func = function()
                return T(_("Server address: %1"), settings:serverUrl() or _("not set"))
            end,
            keep_menu_open = true,
            callback = function(touchmenu_instance) editServer(settings, touchmenu_instance) end,
        },
        {
            text_func = function()
                local name = settings:authMode() == "sync" and settings:loginName()
                return name and T(_("Use the Progress sync login (%1)"), name)
                    or _("Use the Progress sync login")
            end,
            radio = true,
            checked_func = function() return settings:authMode() == "sync" end,
            callback = function() settings:setAuthMode("sync") end,
        },
        {
            text = _("Use a folio token…"),
            radio = true,
            checked_func = function() return settings:authMode() == "token" end,
            keep_menu_open = true,
            callback = function(touchmenu_instance) editToken(settings, touchmenu_instance) end,
        },
    }
end

return FolioSettingsMenu
