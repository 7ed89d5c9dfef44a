-- A widget class that keeps what it was created with, so tests can read it as the reader would.
local FakeWidget = {}

function FakeWidget:extend(subclass)
    subclass = subclass or {}
    setmetatable(subclass, self)
    self.__index = self
    return subclass
end

function FakeWidget:new(o)
    o = self:extend(o or {})
    if o.init then o:init() end
    return o
end

return FakeWidget
