--[[--
What the reader is told when a request to folio fails: one sentence that says what happened
and what to do, for each kind of error folioclient returns.

@module foliomessages
]]

local T = require("ffi/util").template
local _ = require("gettext")

local FolioMessages = {}

--- The text shown for `err` (from folioclient).
-- @tparam table err { kind, status, code, message, retry_after }
-- @tparam table ctx { server_url, file_name, timeout }
function FolioMessages.describe(err, ctx)
    ctx = ctx or {}
    local kind = err and err.kind
    local server = ctx.server_url or "?"
    if kind == "no_server" then
        return _("folio's address is not set.\nSet it in Ask folio › Settings › Server address.")
    elseif kind == "no_login" then
        return _("No login for folio.\nLog in with Progress sync (pointed at your folio server), or set a token in Ask folio › Settings.")
    elseif kind == "unreachable" then
        return T(_("Cannot reach folio at %1.\nCheck Wi-Fi and the server address (%2)."), server, err.message or "")
    elseif kind == "timeout" then
        return T(_("folio at %1 did not answer within %2 seconds.\nTry again, or ask a shorter question."),
            server, ctx.timeout or "?")
    elseif kind == "auth" then
        return T(_("folio refused the login (HTTP %1).\nCheck the sync login or the token in Ask folio › Settings."),
            err.status or 401)
    elseif kind == "not_found" then
        return T(_("This book is not in your folio library.\nAdd this book to folio: %1\n(folio knows a book by its file, so add the same file you read here.)"),
            ctx.file_name or _("this file"))
    elseif kind == "conversation_gone" then
        return _("That conversation no longer exists in folio.\nAsk again: a new conversation will start.")
    elseif kind == "no_route" then
        return T(_("The server at %1 answered, but it is not a folio that can answer KOReader.\nCheck the address, or update folio."), server)
    elseif kind == "rate_limited" then
        if err.retry_after then
            return T(_("folio is busy. Try again in %1 seconds."), err.retry_after)
        end
        return _("folio is busy. Try again in a moment.")
    elseif kind == "invalid" then
        return T(_("folio could not take this question: %1"), err.message or T(_("HTTP %1"), err.status or "?"))
    elseif kind == "bad_response" then
        return T(_("folio at %1 sent an answer KOReader cannot read."), server)
    end
    return T(_("folio failed (HTTP %1): %2"), err and err.status or "?", err and err.message or _("unknown error"))
end

return FolioMessages
