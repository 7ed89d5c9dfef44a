local _ = require("gettext")
return {
    name = "folio",
    fullname = _("Ask folio"),
    description = _([[Ask folio, your reading companion, about the book you are reading: answers bounded by where you are, with citations that open the page.]]),
}
