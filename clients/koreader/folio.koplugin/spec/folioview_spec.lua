local FolioView = require("folioview")

local ANSWER = {
    answer = "**Henry Clerval** is Victor's friend from Geneva [1].\n\n- He nurses Victor through his fever [2].",
    conversation_id = "c1",
    book = { id = "b1", title = "Frankenstein" },
    position = { chapter = "Chapter 5", percentage = 0.2034, page = 45 },
    citations = {
        { n = 1, chapter = "Chapter 1", page = 12, quote = "Henry Clerval was the son of a merchant of Geneva.",
          xpointer = "/body/DocFragment[6]/body/section/p[9]/text().0" },
        { n = 2, chapter = "Chapter 5", page = 44, quote = "I was lifeless, and did not recover my senses for a long, long time.",
          xpointer = "/body/DocFragment[11]/body/section/p[2]/text().5" },
    },
}

describe("FolioView", function()
    it("runs under LuaJIT", function()
        assert.is_table(jit)
    end)

    it("renders an answer as the text the reader sees", function()
        local screen = FolioView.answer(ANSWER, "Who is Clerval?")

        assert.are.equal("Ask folio · Frankenstein", screen.title)
        assert.are.equal(table.concat({
            "through Chapter 5, p. 45 (20%)",
            "",
            "Q: Who is Clerval?",
            "",
            "Henry Clerval is Victor's friend from Geneva [1].",
            "",
            "• He nurses Victor through his fever [2].",
            "",
            "Sources",
            "[1] Chapter 1, p. 12",
            "    “Henry Clerval was the son of a merchant of Geneva.”",
            "[2] Chapter 5, p. 44",
            "    “I was lifeless, and did not recover my senses for a long, long time.”",
        }, "\n"), screen.text)
    end)

    it("makes one button per citation, disabled when it names no place to open", function()
        local tapped = {}
        local citations = {
            ANSWER.citations[1],
            { n = 2, chapter = "Chapter 2", page = 20, quote = "q", xpointer = nil, pdf_page = nil },
            { n = 3, chapter = "Chapter 3", page = 30, quote = "q", xpointer = "/body/DocFragment[8].0" },
            { n = 4, chapter = "Chapter 4", page = 40, quote = "q", xpointer = "/body/DocFragment[9].0" },
        }
        local rows = FolioView.citationRows(citations, false, function(c, target)
            table.insert(tapped, { c.n, target })
        end)

        assert.are.equal(2, #rows) -- three to a row
        assert.are.same({ "[1] p. 12", "[2] p. 20", "[3] p. 30" },
            { rows[1][1].text, rows[1][2].text, rows[1][3].text })
        assert.is_true(rows[1][1].enabled)
        assert.is_false(rows[1][2].enabled)
        rows[1][1].callback()
        assert.are.same({ { 1, { xpointer = "/body/DocFragment[6]/body/section/p[9]/text().0" } } }, tapped)
    end)

    it("opens a PDF citation by its page, not its xpointer", function()
        local c = { n = 1, page = "xii", pdf_page = 14, xpointer = nil }
        assert.are.same({ page = 14 }, FolioView.target(c, true))
        assert.is_nil(FolioView.target({ n = 1, page = 3, xpointer = "/body.0" }, true))
        assert.are.same({ xpointer = "/body.0" }, FolioView.target({ n = 1, xpointer = "/body.0" }, false))
    end)

    it("renders the story so far and the people so far", function()
        local story = FolioView.story({
            text = "Victor leaves for *Ingolstadt* [1].",
            citations = { { n = 1, chapter = "Chapter 3", page = 25, quote = "I left Geneva." } },
            book = { title = "Frankenstein" },
            position = { chapter = "Chapter 5", percentage = 0.2, page = 45 },
        })
        assert.are.equal("Story so far · Frankenstein", story.title)
        assert.are.equal("through Chapter 5, p. 45 (20%)\n\nVictor leaves for Ingolstadt [1].\n\n"
            .. "Sources\n[1] Chapter 3, p. 25\n    “I left Geneva.”", story.text)

        local people = FolioView.people({
            people = {
                { name = "Victor Frankenstein", aliases = { "Victor" }, mentions = 120,
                  introduced = { chapter = "Letter 4", page = 9, quote = "his name was Frankenstein", xpointer = "/x.0" } },
                { name = "Elizabeth Lavenza", aliases = {}, mentions = 30, introduced = nil },
            },
            book = { title = "Frankenstein" },
            position = { chapter = "Chapter 5", percentage = 0.2 },
        })
        assert.are.equal("People so far · Frankenstein", people.title)
        assert.are.equal(table.concat({
            "through Chapter 5 (20%)",
            "",
            "• Victor Frankenstein (also Victor) — 120 mentions",
            "    first met: Letter 4, p. 9",
            "    “his name was Frankenstein”",
            "",
            "• Elizabeth Lavenza — 30 mentions",
        }, "\n"), people.text)
        local rows = FolioView.peopleRows({ { name = "Victor", introduced = { xpointer = "/x.0" } },
            { name = "Elizabeth" } }, false, function() end)
        assert.are.same({ "Victor", "Elizabeth" }, { rows[1][1].text, rows[1][2].text })
        assert.is_false(rows[1][2].enabled)
    end)

    it("prefers folio's own words for the position, and printed page labels", function()
        local citations = { { n = 1, chapter = "Preface", page = nil, page_label = "xii", quote = "q", xpointer = "/a.0" } }
        local story = FolioView.story({
            text = "_Up to Chapter 5_\n\n**Chapter 1**\n\nVictor is born [1].",
            citations = citations,
            position = { description = "through Chapter 5 (p. 45 of 205, 23%)", chapter = "Chapter 5" },
        })
        assert.are.equal("through Chapter 5 (p. 45 of 205, 23%)\n\nUp to Chapter 5\n\nChapter 1\n\n"
            .. "Victor is born [1].\n\nSources\n[1] Preface, p. xii\n    “q”", story.text)
        assert.are.equal("[1] p. xii", FolioView.citationRows(citations, false, function() end)[1][1].text)
        assert.are.equal("a snake_case_name stays", FolioView.plainText("a snake_case_name stays"))
    end)

    it("does not repeat under Sources a quote the answer already shows", function()
        local screen = FolioView.answer({
            answer = 'From the book:\n- "Henry Clerval was the son of a merchant of Geneva." (Chapter 2, p. 21) [1]',
            citations = {
                { n = 1, chapter = "Chapter 2", page = 21, quote = "Henry Clerval was the son of a  merchant of Geneva." },
                { n = 2, chapter = "Chapter 3", page = 28, quote = "Clerval spent the last evening with us." },
            },
        })
        assert.are.equal('From the book:\n• "Henry Clerval was the son of a merchant of Geneva." (Chapter 2, p. 21) [1]'
            .. "\n\nSources\n[1] Chapter 2, p. 21\n[2] Chapter 3, p. 28\n    “Clerval spent the last evening with us.”",
            screen.text)
    end)

    it("says so when no one is named yet", function()
        assert.are.equal("No one named yet up to here.", FolioView.people({ people = {} }).text)
    end)

    it("shortens long quotes at a word, keeping UTF-8 whole", function()
        local long = string.rep("é", 300)
        local short = FolioView.shorten(long, 21)
        assert.are.equal(string.rep("é", 10) .. "…", short)
        assert.are.equal("one two…", FolioView.shorten("one two three", 9))
    end)
end)
