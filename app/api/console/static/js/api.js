// The public JSON API from the browser. The key lives in sessionStorage only (gone when the tab
// closes, never sent anywhere but this origin's API); every failure becomes one readable message.

const KEY = "pairank.key";

export const session = {
  /** The stored key ("" for a keyless sign-in where auth is disabled), or null when signed out. */
  key() {
    return sessionStorage.getItem(KEY);
  },
  save(key) {
    if (key === null) sessionStorage.removeItem(KEY);
    else sessionStorage.setItem(KEY, key);
  },
};

const MEANING = {
  0: "The server cannot be reached",
  400: "Bad request",
  401: "Not signed in, or the key is unknown or revoked",
  403: "Not allowed with this key",
  404: "Not found",
  405: "Not allowed",
  409: "Conflict",
  413: "Too large",
  415: "Wrong content type",
  422: "Invalid input",
  429: "Too many requests",
  503: "The service is not available now",
};

/** The field an error body names: its `field`, else the first validation error's. */
export function errorField(body) {
  if (!body) return null;
  if (body.field) return body.field;
  const first = Array.isArray(body.errors) ? body.errors[0] : null;
  return first && first.field ? first.field : null;
}

/** "Invalid input (422): k: Input should be less than or equal to 100 [field k]". */
export function describe(status, body, retryAfter) {
  const detail = body && body.detail ? String(body.detail) : `HTTP ${status}`;
  const field = errorField(body);
  let text = `${MEANING[status] || "Request failed"} (${status}): ${detail}`;
  if (field) text += ` [field ${field}]`;
  if (retryAfter) text += ` Retry after ${retryAfter} s.`;
  return text;
}

export class ApiError extends Error {
  constructor(status, body, retryAfter = null) {
    super(describe(status, body, retryAfter));
    this.status = status;
    this.field = errorField(body);
    this.body = body;
  }
}

/** One API call; resolves to the JSON body (null for 204), rejects with an ApiError. */
export async function call(method, path, body, key = session.key()) {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return send(method, path, payload, body === undefined ? null : "application/json", key, true);
}

/** Upload a file's content as it is (a bulk import's JSON lines); resolves to the JSON answer. */
export async function upload(path, content, contentType) {
  return send("POST", path, content, contentType, session.key(), true);
}

/** A GET answered with text (an export); rejects with an ApiError. */
export async function fetchText(path) {
  return send("GET", path, undefined, null, session.key(), false);
}

async function send(method, path, payload, contentType, key, json) {
  const headers = { Accept: json ? "application/json" : "*/*" };
  if (key) headers.Authorization = `Bearer ${key}`;
  if (contentType) headers["Content-Type"] = contentType;
  let response;
  try {
    response = await fetch(path, { method, headers, body: payload });
  } catch (error) {
    throw new ApiError(0, { detail: String(error.message || error) });
  }
  if (response.status === 204) return null;
  const text = await response.text();
  if (!json && response.ok) return text;
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = { detail: text.slice(0, 300) };
  }
  if (!response.ok) throw new ApiError(response.status, data || {}, response.headers.get("Retry-After"));
  return data;
}

/** A path segment: every character but letters, digits, - _ ~ percent-encoded, the dot too (README, "Ids"). */
export function seg(value) {
  return encodeURIComponent(value).replace(/[.!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** A corpus's API path. */
export function corpusPath(corpus, rest = "") {
  return `/v1/corpora/${seg(corpus)}${rest}`;
}
