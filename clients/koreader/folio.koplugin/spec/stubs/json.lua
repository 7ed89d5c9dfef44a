-- KOReader's `json` (luajson) API over lua-cjson.
local cjson = require("cjson")
return { encode = cjson.encode, decode = cjson.decode }
