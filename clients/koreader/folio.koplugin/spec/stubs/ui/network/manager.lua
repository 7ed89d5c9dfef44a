-- NetworkMgr: online unless a test says otherwise; an offline call is kept to re-run, as
-- beforeWifiAction does once Wi-Fi is up.
local NetworkMgr = { online = true, pending = {} }
function NetworkMgr:isOnline() return self.online end
function NetworkMgr:willRerunWhenOnline(callback)
    if self.online then return false end
    table.insert(self.pending, callback)
    return true
end
function NetworkMgr:runWhenOnline(callback)
    if self.online then callback() else table.insert(self.pending, callback) end
end
function NetworkMgr:goOnline()
    self.online = true
    local pending = self.pending
    self.pending = {}
    for _, fn in ipairs(pending) do fn() end
end
return NetworkMgr
