-- busted helper: KOReader's modules from spec/stubs, the plugin's from its folder.
local dir = debug.getinfo(1, "S").source:sub(2):match("(.*)/spec/helper.lua$") or "."
package.path = table.concat({
    dir .. "/spec/stubs/?.lua",
    dir .. "/spec/support/?.lua",
    dir .. "/?.lua",
    package.path,
}, ";")
_G.G_reader_settings = require("luasettings"):open("/koreader/settings.reader.lua")
