-- ffi/util's template: "%1 and %2" with its arguments, as KOReader's T() does.
local util = {}
function util.template(str, ...)
    local args = { ... }
    return (str:gsub("%%(%d+)", function(i)
        local v = args[tonumber(i)]
        return v ~= nil and tostring(v) or ""
    end))
end
return util
