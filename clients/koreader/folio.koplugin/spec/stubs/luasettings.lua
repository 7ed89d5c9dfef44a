-- KOReader's LuaSettings, kept in memory: `flush` stores a copy under the file's path and `open`
-- reads that copy back, as a restart of KOReader would.
local LuaSettings = { files = {} }

local function copy(v)
    if type(v) ~= "table" then return v end
    local out = {}
    for k, x in pairs(v) do out[k] = copy(x) end
    return out
end

function LuaSettings:open(path)
    local o = { file = path, data = copy(LuaSettings.files[path]) or {} }
    setmetatable(o, self)
    self.__index = self
    return o
end

function LuaSettings:readSetting(key, default)
    if self.data[key] == nil and default ~= nil then
        self.data[key] = default
    end
    return self.data[key]
end

function LuaSettings:saveSetting(key, value)
    self.data[key] = value
    return self
end

function LuaSettings:delSetting(key)
    self.data[key] = nil
    return self
end

function LuaSettings:flush()
    LuaSettings.files[self.file] = copy(self.data)
end

return LuaSettings
