-- The few helpers of KOReader's frontend/util.lua the plugin uses.
local util = {}
function util.trim(s) return (s:gsub("^%s*(.-)%s*$", "%1")) end
function util.splitFilePathName(file)
    if file == nil or file == "" then return "", "" end
    if not file:find("/") then return "", file end
    return file:match("(.*/)(.*)")
end
function util.cleanupSelectedText(text)
    return util.trim(text):gsub("%s+", " ")
end
util.partial_md5_calls = {}
function util.partialMD5(filepath)
    table.insert(util.partial_md5_calls, filepath)
    return nil
end
return util
