-- KOReader's logger: records lines instead of printing them.
local logger = { lines = {} }
local function record(level)
    return function(...)
        local parts = {}
        for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
        table.insert(logger.lines, level .. " " .. table.concat(parts, " "))
    end
end
logger.dbg, logger.info, logger.warn, logger.err = record("DEBUG"), record("INFO"), record("WARN"), record("ERROR")
return logger
