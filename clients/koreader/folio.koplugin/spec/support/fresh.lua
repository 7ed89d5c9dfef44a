-- A fresh KOReader before each test: nothing on screen, online, empty settings files.
return function()
    local LuaSettings = require("luasettings")
    require("ui/uimanager"):reset()
    local Trapper = require("ui/trapper")
    Trapper.runs, Trapper.dismiss_next = {}, false
    local NetworkMgr = require("ui/network/manager")
    NetworkMgr.online, NetworkMgr.pending = true, {}
    LuaSettings.files = {}
    _G.G_reader_settings = LuaSettings:open("/koreader/settings.reader.lua")
end
