local Event = {}
function Event:new(name, ...)
    return { name = name, handler = "on" .. name, args = { ... } }
end
return Event
