// The reader's own highlights beside an answer's sources: a cited passage that overlaps one of
// them (the server puts them in the citation's `highlights`, inside the reading window only) gets
// a marker on its chip, the highlights and notes in its panel, and the highlighted words marked
// in the passage dialog. Text from the book, the device or the reader is only ever set as text.

// The highlights a citation carries (none for an older server or a stored turn without them).
export function highlightsOf(citation) {
  return Array.isArray(citation.highlights) ? citation.highlights : [];
}

// What the chip says to a screen reader and on hover: "your highlight", "your note", "2 of your
// highlights".
export function highlightLabel(highlights) {
  if (highlights.length > 1) return `${highlights.length} of your highlights`;
  return highlights[0]?.text ? "your highlight" : "your note";
}

// The chip's marker: a small highlighter bar (decoration) and the words for a screen reader
// ("2 p. 32 with your highlight").
export function chipMarker(h, citation) {
  const mine = highlightsOf(citation);
  if (!mine.length) return [];
  return [
    h("span", { class: "hl-flag", "aria-hidden": "true", title: capitalised(highlightLabel(mine)) }),
    h("span", { class: "visually-hidden", text: ` with ${highlightLabel(mine)}` }),
  ];
}

// The panel's and the dialog's list: each highlight's words and the reader's note.
export function highlightList(h, citation) {
  const mine = highlightsOf(citation);
  if (!mine.length) return ""; // (not null: replaceChildren would write it)
  const title = mine.length > 1 ? "Your highlights" : capitalised(highlightLabel(mine));
  return h("section", { class: "source-highlights", "aria-label": `${title} in this passage` },
    h("p", { class: "label", text: title }),
    h("ul", {}, ...mine.map((x) => h("li", { "data-highlight-id": x.id },
      x.text ? h("span", { class: "reader-highlight", text: x.text }) : null,
      x.note ? h("p", { class: "note", text: `Your note: ${x.note}` }) : null))));
}

// `text` (the book's text from offset `offset`) as nodes: the cited part [from, to) in one <mark>,
// and within and around it each stretch the reader highlighted in a span.reader-highlight.
export function passageNodes(h, text, offset, from, to, highlights) {
  const ranges = (highlights || [])
    .map((x) => ({ x, start: clamp(x.char_start - offset, text), end: clamp(x.char_end - offset, text) }))
    .filter((r) => r.end > r.start);
  const part = (a, b) => marked(h, text, a, b, ranges);
  return [...part(0, from), h("mark", {}, ...part(from, to)), ...part(to, text.length)];
}

function marked(h, text, a, b, ranges) {
  const cuts = new Set([a, b]);
  for (const r of ranges) for (const at of [r.start, r.end]) if (at > a && at < b) cuts.add(at);
  const points = [...cuts].sort((p, q) => p - q);
  const out = [];
  for (let i = 0; i + 1 < points.length; i++) {
    const [start, end] = [points[i], points[i + 1]];
    const mine = ranges.filter((r) => r.start <= start && end <= r.end).map((r) => r.x);
    const piece = text.slice(start, end);
    const notes = mine.map((x) => x.note).filter(Boolean);
    out.push(mine.length
      ? h("span", { class: "reader-highlight", "data-highlight-id": mine[0].id,
        title: ["Your highlight", ...notes.map((n) => `Your note: ${n}`)].join("\n") }, piece)
      : piece);
  }
  return out;
}

function clamp(at, text) {
  return Math.max(0, Math.min(text.length, Number(at) || 0));
}

function capitalised(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
