-- Trapper: wrap runs at once; dismissableRunInSubprocess runs the task in process (as Trapper
-- does when unwrapped) unless a test dismisses it. `runs` records each task's waiting text.
local Trapper = { runs = {}, dismiss_next = false }
function Trapper:wrap(fn) return fn() end
function Trapper:dismissableRunInSubprocess(task, trap_widget_or_string)
    table.insert(self.runs, trap_widget_or_string)
    if self.dismiss_next then
        self.dismiss_next = false
        return false
    end
    return true, task()
end
return Trapper
