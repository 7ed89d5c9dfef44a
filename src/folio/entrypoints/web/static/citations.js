// How an answer's sources read on the page: each source's number where the server put it (its
// `citation_marks`: one number per source, the rule the terminal and /v1 follow too), and a cited
// passage reflowed as paragraphs. Text is only ever set as text or through renderMarkdown.
import { renderMarkdown } from "./markdown.js";

const OPEN = "\uE000"; // private-use characters: a mark's place survives the Markdown rendering
const CLOSE = "\uE001";
const TOKEN = /\uE000(\d+)\uE001/g;

// `answer` as Markdown in `body`, with `button(n)` after each place `marks` ({at, source}) names.
// `at` counts characters (code points) of the answer, as the server does.
export function renderAnswer(body, answer, marks, button) {
  const chars = Array.from(answer || "");
  const sorted = [...(marks || [])].sort((a, b) => b.at - a.at || b.source - a.source);
  for (const { at, source } of sorted) {
    if (Number.isInteger(at) && at >= 0 && at <= chars.length) chars.splice(at, 0, `${OPEN}${source}${CLOSE}`);
  }
  renderMarkdown(body, chars.join(""));
  const walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT);
  const nodes = [];
  while (walker.nextNode()) if (walker.currentNode.nodeValue.includes(OPEN)) nodes.push(walker.currentNode);
  for (const node of nodes) {
    const text = node.nodeValue;
    const parts = [];
    let last = 0;
    for (const match of text.matchAll(TOKEN)) {
      parts.push(text.slice(last, match.index), button(Number(match[1])));
      last = match.index + match[0].length;
    }
    node.replaceWith(...parts, text.slice(last));
  }
}

// A book's text keeps its source's hard line breaks (a Gutenberg text wraps prose at about 70
// columns), which on a phone read as broken verse. A paragraph of wrapped prose gets spaces for
// its line breaks; a paragraph of verse keeps its lines. Each break inside a paragraph is weighed:
// it looks wrapped when the next line goes on in lower case or when the line was full (the next
// line's first word would not have fitted within the text's width, its longest line); it looks
// like the end of a verse line when the next line is indented, or when it starts with a capital
// although the line did not end a sentence and had room left. A paragraph is prose when more of
// its breaks look wrapped, verse when more look like line ends, and keeps its lines when neither
// tells (each line a sentence); an indented line starts its own line in prose too. The result
// has the same length as `text` (a "\n" becomes " "), so offsets into it still hold.
export function reflow(text) {
  const lines = text.split("\n");
  const width = Math.max(0, ...lines.map((l) => l.trimEnd().length));
  const out = [];
  let run = [];
  const flush = () => {
    // in prose, an indented line still starts its own line (a speaker, a signature)
    const join = (line, i) => (i === 0 ? "" : /^\s/.test(line) ? "\n" : " ") + line;
    if (run.length) out.push(isProse(run, width) ? run.map(join).join("") : run.join("\n"));
    run = [];
  };
  for (const line of lines) {
    if (line.trim()) { run.push(line); continue; }
    flush();
    out.push(line);
  }
  flush();
  return out.join("\n");
}

const SENTENCE_END = /[.!?]["'”’)\]_*]*$/;

function isProse(run, width) {
  let wrapped = 0;
  let ended = 0;
  for (let i = 0; i + 1 < run.length; i++) {
    const line = run[i].trimEnd();
    const next = run[i + 1];
    const word = next.trim().split(/\s+/)[0] || "";
    const letter = (next.match(/\p{L}/u) || [""])[0];
    const lower = letter !== "" && letter !== letter.toUpperCase();
    const capital = letter !== "" && letter !== letter.toLowerCase();
    const full = line.length + 1 + word.length > width;
    if (/^\s/.test(next)) ended++;
    else if (lower || full) wrapped++;
    else if (capital && !SENTENCE_END.test(line)) ended++;
  }
  return wrapped > ended;
}
