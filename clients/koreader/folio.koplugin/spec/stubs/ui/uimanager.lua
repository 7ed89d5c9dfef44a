-- KOReader's UIManager, recording: `stack` holds what is on screen (last = topmost), `shown`
-- everything ever shown, in order. Scheduled functions run at once.
local UIManager = { stack = {}, shown = {} }

function UIManager:reset()
    self.stack, self.shown = {}, {}
end

function UIManager:show(widget)
    table.insert(self.stack, widget)
    table.insert(self.shown, widget)
end

function UIManager:close(widget)
    for i = #self.stack, 1, -1 do
        if self.stack[i] == widget then
            table.remove(self.stack, i)
            if widget and widget.close_callback then widget.close_callback() end
            return
        end
    end
end

function UIManager:top() return self.stack[#self.stack] end
function UIManager:scheduleIn(_, fn) fn() end
function UIManager:nextTick(fn) fn() end
function UIManager:unschedule() end
function UIManager:setDirty() end
return UIManager
