// The HTTP API as the page uses it: JSON calls, uploads with progress, and a streamed turn read
// from Server-Sent Events over fetch (so it can be aborted). Every failure becomes an ApiError
// carrying the server's one error body ({error: {code, message}}).

const V1 = "/api/v1";
const TOKEN_KEY = "folio.token";

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function token() {
  return localStorage.getItem(TOKEN_KEY) || "";
}

export function setToken(value) {
  if (value) localStorage.setItem(TOKEN_KEY, value);
  else localStorage.removeItem(TOKEN_KEY);
}

function headers(extra = {}) {
  const h = { ...extra };
  if (token()) h.Authorization = `Bearer ${token()}`;
  return h;
}

async function failure(response) {
  let code = "HTTP_" + response.status;
  let message = `The server answered ${response.status} ${response.statusText}`;
  try {
    const body = await response.json();
    if (body && body.error) {
      code = body.error.code || code;
      message = body.error.message || message;
    }
  } catch {
    // not JSON: keep the status line
  }
  return new ApiError(response.status, code, message);
}

function offline(e) {
  return new ApiError(0, "NETWORK", `Cannot reach folio (${e.message || e}). Is folio serve running?`);
}

export async function call(method, path, body, { raw = false } = {}) {
  const init = { method, headers: headers() };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(V1 + path, init);
  } catch (e) {
    throw offline(e);
  }
  if (!response.ok) throw await failure(response);
  if (raw) return response;
  if (response.status === 204) return null;
  return response.json();
}

export const get = (path) => call("GET", path);
export const post = (path, body) => call("POST", path, body);
export const patch = (path, body) => call("PATCH", path, body);
export const put = (path, body) => call("PUT", path, body);
export const del = (path) => call("DELETE", path);

// A multipart form (a file and its fields), answered with JSON.
export async function postForm(path, form) {
  let response;
  try {
    response = await fetch(V1 + path, { method: "POST", headers: headers(), body: form });
  } catch (e) {
    throw offline(e);
  }
  if (!response.ok) throw await failure(response);
  return response.json();
}

// Upload one book with progress (fetch cannot report upload progress; XMLHttpRequest can).
export function upload(file, onProgress, fields = {}) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", V1 + "/books");
    if (token()) xhr.setRequestHeader("Authorization", `Bearer ${token()}`);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => {
      let body = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        // not JSON
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(body);
      else {
        const error = (body && body.error) || {};
        reject(new ApiError(xhr.status, error.code || "HTTP_" + xhr.status,
          error.message || `The upload failed (${xhr.status})`));
      }
    };
    xhr.onerror = () => reject(offline(new Error("network error")));
    const form = new FormData();
    form.append("file", file, file.name);
    for (const [name, value] of Object.entries(fields)) if (value) form.append(name, value);
    xhr.send(form);
  });
}

// A streamed turn. onEvent(name, data) gets tool_call, tool_result, delta; resolves with the
// `done` turn; rejects with ApiError for an `error` event or a refused request, and with an
// AbortError when `signal` aborts (the server then stores nothing).
export async function streamTurn(conversationId, message, onEvent, signal) {
  let response;
  try {
    response = await fetch(`${V1}/conversations/${encodeURIComponent(conversationId)}/messages`, {
      method: "POST",
      headers: headers({ "Content-Type": "application/json", Accept: "text/event-stream" }),
      body: JSON.stringify({ message, stream: true }),
      signal,
    });
  } catch (e) {
    if (e.name === "AbortError") throw e;
    throw offline(e);
  }
  if (!response.ok) throw await failure(response);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let name = "message";
      const data = [];
      for (const line of frame.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (!data.length) continue;
      const payload = JSON.parse(data.join("\n"));
      if (name === "done") return payload;
      if (name === "error") {
        const e = payload.error || {};
        throw new ApiError(e.status || 500, e.code || "ERROR", e.message || "The turn failed");
      }
      onEvent(name, payload);
    }
  }
  throw new ApiError(0, "NETWORK", "The answer stopped before it was finished (connection closed)");
}
