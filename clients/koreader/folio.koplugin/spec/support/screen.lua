-- What the reader sees, as text: a recorded widget drawn as a box with its title, its text and its
-- buttons ("[ Close ]"; a disabled button in parentheses).
local screen = {}

local function buttonRows(rows)
    local out = {}
    for _, row in ipairs(rows or {}) do
        local cells = {}
        for _, b in ipairs(row) do
            local label = b.text_func and b.text_func() or b.text
            if b.enabled == false then
                table.insert(cells, "( " .. label .. " )")
            else
                table.insert(cells, "[ " .. label .. " ]")
            end
        end
        table.insert(out, "│ " .. table.concat(cells, " "))
    end
    return out
end

function screen.render(widget)
    local lines = { "┌─ " .. widget.kind .. (widget.title and (": " .. widget.title) or "") }
    local body = widget.text or widget.description
    if widget.kind == "InputDialog" and widget.description then
        body = widget.description .. "\n> " .. (widget.typed or widget.input or widget.input_hint or "")
    end
    for line in ((body or "") .. "\n"):gmatch("(.-)\n") do
        table.insert(lines, "│ " .. line)
    end
    local rows = widget.buttons_table or widget.buttons
    if rows and #rows > 0 then
        table.insert(lines, "├─")
        for _, l in ipairs(buttonRows(rows)) do table.insert(lines, l) end
    end
    table.insert(lines, "└─")
    return table.concat(lines, "\n")
end

--- The topmost widget, drawn.
function screen.top()
    local UIManager = require("ui/uimanager")
    local top = UIManager:top()
    return top and screen.render(top) or "(nothing shown)"
end

--- The button labelled `label` on `widget` (nil when absent).
function screen.button(widget, label)
    for _, row in ipairs(widget.buttons_table or widget.buttons or {}) do
        for _, b in ipairs(row) do
            if b.text == label then return b end
        end
    end
end

return screen
