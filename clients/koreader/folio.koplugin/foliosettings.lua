--[[--
folio's settings, kept in KOReader's own settings (`G_reader_settings`, key "folio"): the server's
address, how to log in ("sync": the Progress sync login the reader already set up, or "token": a
folio API token), and the conversation each book continues (by document digest).

The sync login is read, never written: since KOReader v2026.07 kosync keeps it in
`settings/kosync.lua` (key "settings"), before that in `G_reader_settings` (key "kosync").

@module foliosettings
]]

local DataStorage = require("datastorage")
local LuaSettings = require("luasettings")

local KEY = "folio"

local FolioSettings = {
    reader_settings = nil, -- G_reader_settings
    kosync_file = nil,     -- path of kosync's settings file
    live_kosync = nil,     -- function returning the running kosync plugin's settings, if any
}

function FolioSettings:new(o)
    o = o or {}
    setmetatable(o, self)
    self.__index = self
    o.reader_settings = o.reader_settings or G_reader_settings
    o.kosync_file = o.kosync_file or (DataStorage:getSettingsDir() .. "/kosync.lua")
    o.data = o.reader_settings:readSetting(KEY) or {}
    o.data.conversations = o.data.conversations or {}
    return o
end

function FolioSettings:save()
    self.reader_settings:saveSetting(KEY, self.data)
end

--- The Progress sync plugin's settings table, or an empty one.
function FolioSettings:kosync()
    local live = self.live_kosync and self.live_kosync()
    if type(live) == "table" and live.userkey then
        return live
    end
    local ok, file = pcall(LuaSettings.open, LuaSettings, self.kosync_file)
    local settings = ok and file and file:readSetting("settings")
    if type(settings) == "table" and settings.userkey then
        return settings
    end
    return self.reader_settings:readSetting("kosync") or {}
end

--- The server's address: the one set here, else the Progress sync server (folio serves both).
function FolioSettings:serverUrl()
    if self.data.server_url and self.data.server_url ~= "" then
        return self.data.server_url
    end
    return self:kosync().custom_server
end

function FolioSettings:setServerUrl(url)
    url = url and url:gsub("^%s+", ""):gsub("%s+$", ""):gsub("/+$", "")
    self.data.server_url = url and url ~= "" and url or nil
    self:save()
end

--- "sync" (default) or "token".
function FolioSettings:authMode()
    return self.data.auth_mode == "token" and "token" or "sync"
end

function FolioSettings:setAuthMode(mode)
    self.data.auth_mode = mode == "token" and "token" or "sync"
    self:save()
end

function FolioSettings:setToken(token)
    token = token and token:gsub("%s+", "")
    self.data.token = token ~= "" and token or nil
    self:save()
end

function FolioSettings:hasToken()
    return self.data.token ~= nil
end

--- The login folioclient sends, or nil when the chosen one is not set up.
function FolioSettings:login()
    if self:authMode() == "token" then
        return self.data.token and { token = self.data.token } or nil
    end
    local kosync = self:kosync()
    if kosync.username and kosync.userkey then
        return { username = kosync.username, userkey = kosync.userkey }
    end
    return nil
end

--- A short description of the login in use, for the menu.
function FolioSettings:loginName()
    if self:authMode() == "token" then
        return self.data.token and "token" or nil
    end
    return self:kosync().username
end

function FolioSettings:conversation(document)
    return document and self.data.conversations[document] or nil
end

function FolioSettings:setConversation(document, conversation_id)
    if not document then return end
    self.data.conversations[document] = conversation_id
    self:save()
end

return FolioSettings
