// The static site's service worker (zrviz site DIR): it runs the zrviz server, built as WebAssembly
// (cmd/zrviz-wasm), and answers every request of this origin's pages with it, except the site's own
// files (sw.js, zrviz.wasm, wasm_exec.js, index.html, 404.html, boot.js, prefix.js, /static/…), which
// come from DIR as they are. DIR may be served under any folder of the host (BASE). The player's connection is a MessagePort the page hands over ({type: 'zrviz-ws'}), and an
// image the user opens is a File handed over the same way ({type: 'zrviz-open'}): read here, in place,
// never sent anywhere.
/* global Go */
importScripts('./wasm_exec.js');

/** Paths that are files of the site, fetched from the static host as they are. */
const SITE_FILES = new Set(['/sw.js', '/zrviz.wasm', '/wasm_exec.js', '/index.html', '/404.html', '/boot.js', '/prefix.js']);

/**
 * The folder the site is served from ("/" at a host's root, "/~prof/zrviz/" under a course's page):
 * the worker's scope. Every path the server knows is relative to it: a request under it is the
 * server's path with the prefix taken off, and the pages' root-relative URLs (which the server
 * writes as if at the root) are put back under it (rebase, prefix.js).
 */
const BASE = new URL(self.registration.scope).pathname;

/** @type {Promise<any>|null} the running server (self.zrviz), started once per worker */
let server = null;

/** @type {WebAssembly.Memory|null} the server's linear memory: what the worker holds for it */
let memory = null;

/** Starts the WebAssembly server, or returns the one running. */
function start() {
  if (server) return server;
  server = (async () => {
    const go = new Go();
    const url = new URL('./zrviz.wasm', self.registration.scope);
    let inst;
    try {
      inst = (await WebAssembly.instantiateStreaming(fetch(url), go.importObject)).instance;
    } catch (e) {
      // A host that serves .wasm with another type: compile from the bytes instead.
      const bytes = await (await fetch(url)).arrayBuffer();
      inst = (await WebAssembly.instantiate(bytes, go.importObject)).instance;
    }
    memory = /** @type {WebAssembly.Memory} */ (inst.exports.mem);
    go.run(inst);
    const z = /** @type {any} */ (self).zrviz;
    if (!z) throw new Error('zrviz.wasm did not start');
    return z;
  })();
  server.catch(() => { server = null; });
  return server;
}

self.addEventListener('install', (ev) => {
  self.skipWaiting();
  ev.waitUntil(start());
});

self.addEventListener('activate', (ev) => {
  ev.waitUntil(self.clients.claim());
});

/**
 * Whether path is one of the site's own files.
 * @param {string} path
 */
function siteFile(path) {
  return SITE_FILES.has(path) || path.startsWith('/static/');
}

/**
 * The server's path of a URL of this origin: under the site's folder, the rest of it; elsewhere (a
 * root-relative URL a page under the folder asked for: a module, /api/…) the path as it is.
 * @param {URL} url
 */
function appPath(url) {
  return url.pathname.startsWith(BASE) ? `/${url.pathname.slice(BASE.length)}` : url.pathname;
}

self.addEventListener('fetch', (ev) => {
  const url = new URL(ev.request.url);
  if (url.origin !== self.location.origin) return;
  const path = appPath(url);
  if (siteFile(path)) {
    // The site's own file: from the host, under the site's folder.
    if (path === url.pathname || url.pathname.startsWith(BASE)) return;
    ev.respondWith(fetch(new URL(BASE + path.slice(1) + url.search, url.origin)));
    return;
  }
  ev.respondWith(answer(ev.request, url, path));
});

/**
 * Puts the root-relative URLs of a page (its links, forms, scripts and styles) under the site's
 * folder, and loads prefix.js, which does the same for the links and navigations the page's
 * modules make. Nothing changes at a host's root.
 * @param {string} html
 */
function rebase(html) {
  if (BASE === '/') return html;
  const out = html.replace(/(\s(?:href|src|action|formaction)=")\/(?!\/)/g, `$1${BASE}`);
  return out.replace(/<head>/i, `<head><script src="${BASE}prefix.js" data-base="${BASE}"></script>`);
}

/**
 * Answers a request with the server's handler.
 * @param {Request} req
 * @param {URL} url
 */
async function answer(req, url, path) {
  let z;
  try {
    z = await start();
  } catch (e) {
    return new Response(`zrviz could not start in this browser: ${e}`, { status: 500, headers: { 'Content-Type': 'text/plain; charset=utf-8' } });
  }
  if (z.error) {
    return new Response(`zrviz could not start: ${z.error}`, { status: 500, headers: { 'Content-Type': 'text/plain; charset=utf-8' } });
  }
  const body = req.method === 'GET' || req.method === 'HEAD' ? null : new Uint8Array(await req.arrayBuffer());
  const headers = [];
  for (const [k, v] of req.headers) {
    // The handler answers one origin; the browser's own guards already kept others out.
    if (k === 'origin' || k.startsWith('sec-fetch-')) continue;
    // Under a folder the pages are rewritten (rebase): they come uncompressed.
    if (k === 'accept-encoding' && BASE !== '/') continue;
    headers.push([k, v]);
  }
  const res = await z.serve({ method: req.method, url: path + url.search, headers, body });
  const h = new Headers();
  for (const [k, v] of res.headers) {
    // A redirect to a root-relative path goes under the site's folder too.
    h.append(k, k.toLowerCase() === 'location' && BASE !== '/' && /^\/(?!\/)/.test(v) ? BASE + v.slice(1) : v);
  }
  const nobody = req.method === 'HEAD' || res.status === 204 || res.status === 304;
  let out = nobody ? null : res.body;
  if (out && BASE !== '/' && /^text\/html/.test(h.get('content-type') || '')) {
    out = rebase(new TextDecoder().decode(out));
    h.delete('content-length');
  }
  return new Response(out, { status: res.status, headers: h });
}

self.addEventListener('message', (ev) => {
  const m = ev.data;
  if (!m || typeof m !== 'object') return;
  const port = ev.ports[0];
  if (m.type === 'zrviz-ws' && port) {
    ev.waitUntil(start().then((z) => z.connect(String(m.path), port), (e) => {
      port.postMessage({ kind: 'close', code: 1011, reason: `zrviz could not start: ${e}` });
    }));
  } else if (m.type === 'zrviz-open' && port) {
    ev.waitUntil(start()
      .then((z) => z.openLocal(m.file))
      .then((r) => port.postMessage({ ok: true, id: r.id, name: r.name }),
        (e) => port.postMessage({ ok: false, error: String(e && e.message ? e.message : e) })));
  } else if (m.type === 'zrviz-stats' && port) {
    // The worker's memory for the server (docs/performance.md states it for an 8 GiB image).
    port.postMessage({ wasmMemory: memory ? memory.buffer.byteLength : 0 });
  }
  // {type: 'zrviz-ping'}: a page keeps the worker (and the images it holds) alive.
});
