--[[--
Turns folio's answers into what KOReader shows: the title and plain text of a TextViewer (the
answer with its [n] markers, then the numbered sources with chapter, page and quote) and the rows
of buttons that jump to each cited place. Pure: callbacks come from the caller, nothing is shown
here, so the screens can be asserted as text.

@module folioview
]]

local T = require("ffi/util").template
local _ = require("gettext")

local FolioView = {
    QUOTE_CHARS = 240,
    BUTTONS_PER_ROW = 3,
}

local function trim(s)
    return (tostring(s or ""):gsub("^%s+", ""):gsub("%s+$", ""))
end

--- Cuts `text` to at most `max` characters (UTF-8 safe), at a word boundary when there is one.
function FolioView.shorten(text, max)
    text = trim(text):gsub("%s+", " ")
    if #text <= max then return text end
    local cut = text:sub(1, max)
    -- do not end inside a multi-byte character
    cut = cut:gsub("[\192-\255][\128-\191]*$", "")
    local at_space = cut:match("^(.*)%s%S*$")
    if at_space and #at_space > max / 2 then cut = at_space end
    return cut .. "…"
end

--- Markdown as an e-reader's plain text: emphasis and code marks dropped, bullets as "•",
-- links as their text; the [n] citation markers stay.
function FolioView.plainText(markdown)
    local lines = {}
    for line in (tostring(markdown or "") .. "\n"):gmatch("(.-)\r?\n") do
        line = line:gsub("^%s*#+%s+", "")
        line = line:gsub("^(%s*)[-*+]%s+", "%1• ")
        line = line:gsub("%[([^%]]+)%]%(([^)]*)%)", "%1")
        line = line:gsub("%*%*(.-)%*%*", "%1"):gsub("__(.-)__", "%1")
        line = line:gsub("%*(%S[^*]-)%*", "%1")
        line = line:gsub("%f[%w_]_([^_]-[^_%s])_%f[^%w_]", "%1")
        line = line:gsub("`([^`]*)`", "%1")
        table.insert(lines, line)
    end
    return trim(table.concat(lines, "\n"):gsub("\n\n\n+", "\n\n"))
end

--- "Chapter 3, p. 20" (what a citation or a position names that the reader can find).
function FolioView.place(item)
    local parts = {}
    if item and item.chapter and trim(item.chapter) ~= "" then
        table.insert(parts, trim(item.chapter))
    end
    local page = item and (item.page or item.page_label)
    if page then
        table.insert(parts, T(_("p. %1"), page))
    elseif item and item.pdf_page then
        table.insert(parts, T(_("p. %1"), item.pdf_page))
    end
    return table.concat(parts, ", ")
end

--- folio's own words for the place asked from ("through Chapter 5 (p. 45 of 205, 23%)"), else
-- "through Chapter 5, p. 45 (23%)" from its fields.
function FolioView.position(position)
    if type(position) ~= "table" then return nil end
    if type(position.description) == "string" and trim(position.description) ~= "" then
        return trim(position.description)
    end
    local text = FolioView.place(position)
    local pct = tonumber(position.percentage)
    if pct then
        if pct <= 1 then pct = pct * 100 end
        local shown = T("%1%", math.floor(pct + 0.5))
        text = text ~= "" and T("%1 (%2)", text, shown) or shown
    end
    if text == "" then return nil end
    return T(_("through %1"), text)
end

local function squeeze(text)
    return (tostring(text or ""):gsub("%s+", " "))
end

--- The numbered sources; a quote the text above already shows word for word is not repeated.
local function sources(citations, heading, shown)
    if type(citations) ~= "table" or #citations == 0 then return nil end
    local out = { heading }
    shown = squeeze(shown)
    for i, c in ipairs(citations) do
        local n = c.n or i
        local where = FolioView.place(c)
        table.insert(out, T("[%1] %2", n, where ~= "" and where or _("(no page)")))
        local quote = c.quote and trim(c.quote) or ""
        if quote ~= "" and not shown:find(squeeze(quote), 1, true) then
            table.insert(out, T("    “%1”", FolioView.shorten(c.quote, FolioView.QUOTE_CHARS)))
        end
    end
    return table.concat(out, "\n")
end

local function titled(kind, result)
    local book = type(result.book) == "table" and result.book.title
    if book and trim(book) ~= "" then
        return T("%1 · %2", kind, trim(book))
    end
    return kind
end

--- The non-empty blocks, a blank line apart (`blocks` may have holes: absent parts are nil).
local function join(blocks)
    local out = {}
    for i = 1, table.maxn(blocks) do
        local b = blocks[i]
        if b and b ~= "" then table.insert(out, b) end
    end
    return table.concat(out, "\n\n")
end

--- The viewer of an answer: { title, text }.
function FolioView.answer(result, question)
    local answer = FolioView.plainText(result.answer)
    return {
        title = titled(_("Ask folio"), result),
        text = join{
            FolioView.position(result.position),
            question and T(_("Q: %1"), FolioView.shorten(question, 400)) or nil,
            answer,
            sources(result.citations, _("Sources"), answer),
        },
    }
end

--- The viewer of the story so far: { title, text }.
function FolioView.story(result)
    local text = FolioView.plainText(result.text)
    return {
        title = titled(_("Story so far"), result),
        text = join{
            FolioView.position(result.position),
            text,
            sources(result.citations, _("Sources"), text),
        },
    }
end

local function personBlock(p)
    local head = "• " .. trim(p.name)
    if type(p.aliases) == "table" and #p.aliases > 0 then
        head = head .. T(_(" (also %1)"), table.concat(p.aliases, ", "))
    end
    if tonumber(p.mentions) then
        head = head .. T(_(" — %1 mentions"), p.mentions)
    end
    local lines = { head }
    local intro = p.introduced
    if type(intro) == "table" then
        local where = FolioView.place(intro)
        if where ~= "" then
            table.insert(lines, T(_("    first met: %1"), where))
        end
        if intro.quote and trim(intro.quote) ~= "" then
            table.insert(lines, T("    “%1”", FolioView.shorten(intro.quote, FolioView.QUOTE_CHARS)))
        end
    end
    return table.concat(lines, "\n")
end

--- The viewer of the people met so far: { title, text }.
function FolioView.people(result)
    local blocks = { FolioView.position(result.position) }
    local people = type(result.people) == "table" and result.people or {}
    if #people == 0 then
        table.insert(blocks, _("No one named yet up to here."))
    end
    for _, p in ipairs(people) do
        table.insert(blocks, personBlock(p))
    end
    return { title = titled(_("People so far"), result), text = join(blocks) }
end

--- Whether a cited place can be opened in the open document (`is_paged`: a PDF, CBZ, DjVu).
function FolioView.target(item, is_paged)
    if type(item) ~= "table" then return nil end
    if is_paged then
        local page = tonumber(item.pdf_page)
        return page and { page = page } or nil
    end
    if type(item.xpointer) == "string" and item.xpointer ~= "" then
        return { xpointer = item.xpointer }
    end
    return nil
end

--- Rows of buttons, one per citation: "[1] p. 20", disabled when it names no place to open.
-- @tparam table citations
-- @bool is_paged
-- @tparam func on_tap called with (citation, target)
function FolioView.citationRows(citations, is_paged, on_tap)
    local rows, row = {}, {}
    for i, c in ipairs(type(citations) == "table" and citations or {}) do
        local target = FolioView.target(c, is_paged)
        local label = T("[%1]", c.n or i)
        local page = c.page or c.page_label or c.pdf_page
        if page then label = T("%1 p. %2", label, page) end
        table.insert(row, {
            text = label,
            enabled = target ~= nil,
            callback = function() on_tap(c, target) end,
        })
        if #row == FolioView.BUTTONS_PER_ROW then
            table.insert(rows, row)
            row = {}
        end
    end
    if #row > 0 then table.insert(rows, row) end
    return rows
end

--- Rows of buttons, one per person, jumping to where each was introduced.
function FolioView.peopleRows(people, is_paged, on_tap)
    local rows, row = {}, {}
    for _, p in ipairs(type(people) == "table" and people or {}) do
        local target = FolioView.target(p.introduced, is_paged)
        table.insert(row, {
            text = trim(p.name),
            enabled = target ~= nil,
            callback = function() on_tap(p.introduced, target) end,
        })
        if #row == 2 then
            table.insert(rows, row)
            row = {}
        end
    end
    if #row > 0 then table.insert(rows, row) end
    return rows
end

return FolioView
