-- KOReader's frontend/socketutil.lua without its Device/Version dependencies: the same timeout
-- handling (socket.tcp honouring block and total timeouts, a sink that stops after total_timeout).
local http = require("socket.http")
local ltn12 = require("ltn12")
local socket = require("socket")

local socketutil = {
    block_timeout = 60,
    total_timeout = -1,
    DEFAULT_BLOCK_TIMEOUT = 60,
    DEFAULT_TOTAL_TIMEOUT = -1,
    TIMEOUT_CODE = "timeout",
    SSL_HANDSHAKE_CODE = "wantread",
    SINK_TIMEOUT_CODE = "sink timeout",
    history = {},
}

function socketutil:set_timeout(block_timeout, total_timeout)
    self.block_timeout = block_timeout or 5
    self.total_timeout = total_timeout or 15
    http.TIMEOUT = self.block_timeout
    table.insert(self.history, { self.block_timeout, self.total_timeout })
end

function socketutil:reset_timeout()
    self.block_timeout = self.DEFAULT_BLOCK_TIMEOUT
    self.total_timeout = self.DEFAULT_TOTAL_TIMEOUT
    http.TIMEOUT = self.block_timeout
    table.insert(self.history, "reset")
end

local real_socket_tcp = socket.tcp
function socketutil.tcp()
    local req_sock = real_socket_tcp()
    req_sock:settimeout(socketutil.block_timeout, "b")
    req_sock:settimeout(socketutil.total_timeout, "t")
    return req_sock
end
socket.tcp = socketutil.tcp

function socketutil.table_sink(t)
    if socketutil.total_timeout < 0 then
        return ltn12.sink.table(t)
    end
    local start_ts = os.time()
    t = t or {}
    local f = function(chunk)
        if chunk then
            if os.time() - start_ts > socketutil.total_timeout then
                return nil, socketutil.SINK_TIMEOUT_CODE
            end
            table.insert(t, chunk)
        end
        return 1
    end
    return f, t
end

return socketutil
