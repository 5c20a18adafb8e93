// The dashboard's API as the page calls it: the user's token lives in this tab's sessionStorage only and goes as a
// header on every call (no cookie: another site cannot make the browser use it). Live views are server-sent events
// read with fetch, so the token stays a header there too.
export const TOKEN_KEY = 'capstan-dashboard-token';

export const token = () => sessionStorage.getItem(TOKEN_KEY);

/** `namespace/name` of an object, as the API's paths and the page's addresses spell it. */
export const objectPath = (namespace, name) => `${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;

export const UNAUTHORIZED = 'Your token is no longer accepted: sign in again.';

let unauthorized = () => undefined;

/** What to do when the API says the token is not accepted (app.js signs the tab out). */
export function onUnauthorized(handler) {
  unauthorized = handler;
}

/** A failed call: a 401 signs the tab out, anything else is shown with `show(message)`. */
export function failed(error, show) {
  if (error?.status === 401) unauthorized(UNAUTHORIZED);
  else show(error?.message ?? String(error));
}

/** A call as the user; a refusal throws the API server's message (the dashboard passes it on) and status. */
export async function call(path, init = {}) {
  const response = await fetch(`/dashboard/api/${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token()}`, ...(init.headers ?? {}) },
  });
  if (!response.ok) {
    const body = await response.json().catch(() => ({}));
    throw Object.assign(new Error(body.message ?? response.statusText), { status: response.status });
  }
  return response;
}

/** A JSON call. */
export async function api(path, init = {}) {
  const response = await call(path, {
    ...init,
    headers: { 'content-type': 'application/json', ...(init.headers ?? {}) },
  });
  return response.json().catch(() => ({}));
}

/** A POST of `body` as JSON. */
export const post = (path, body = {}) => api(path, { method: 'POST', body: JSON.stringify(body) });

/**
 * Reads one server-sent event stream until it ends: `onEvent(event, payload)` for each message, `onOpen()` once the
 * server answered. Throws what `call` throws when it is refused.
 */
async function readStream(path, signal, { onEvent, onOpen }) {
  const response = await call(path, { signal });
  onOpen?.();
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const message = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event: (.*)$/m.exec(message)?.[1];
      const data = /^data: (.*)$/m.exec(message)?.[1];
      if (!event || data === undefined) continue;
      if (onEvent(event, JSON.parse(data)) === false) return;
    }
  }
}

/**
 * Follows a stream while it is wanted: on any end but `close()` it starts again a second later (the server sends a
 * fresh snapshot). `signed-out` signs the tab out; a refusal other than a server error (403, 404) stops it and is
 * passed to `onRefused`. Returns `{ close }`.
 */
export function follow(path, { onEvent, onOpen, onStatus, onRefused }) {
  const controller = new AbortController();
  let closed = false;
  const handle = (event, payload) => {
    if (event === 'signed-out') {
      closed = true;
      controller.abort();
      unauthorized(payload.message);
      return false;
    }
    if (event === 'error') onStatus?.(payload.message);
    else onEvent(event, payload);
    return !closed;
  };
  (async () => {
    while (!closed) {
      try {
        await readStream(path, controller.signal, { onEvent: handle, onOpen });
      } catch (error) {
        if (closed) return;
        if (error?.status === 401) return unauthorized(UNAUTHORIZED);
        if (error?.status >= 400 && error.status < 500 && error.status !== 429) return onRefused?.(error);
      }
      if (closed) return;
      onStatus?.('reconnecting');
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  })();
  return {
    close() {
      closed = true;
      controller.abort();
    },
  };
}
