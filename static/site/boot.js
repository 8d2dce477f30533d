// The static site's first page (index.html, and 404.html for a deep link on hosts that serve it)
// loads this from the site's folder (data-base: "/" at a host's root, "/~prof/zrviz/" under a
// course's page): it installs the service worker that runs zrviz (sw.js) for that folder and then
// loads the page asked for, which the worker answers. Nothing here talks to any other host.
(function boot() {
  const me = document.currentScript;
  const base = (me && me.dataset && me.dataset.base) || '/';
  const status = document.getElementById('status');
  /** @param {string} msg */
  function say(msg) { if (status) status.textContent = msg; }
  if (!('serviceWorker' in navigator) || !window.isSecureContext) {
    say('zrviz runs here as a service worker, which this browser allows only on https:// or http://localhost pages. ' +
      'Serve this folder over one (for example: python3 -m http.server -d DIR, then open http://localhost:8000/), ' +
      'not from a file:// path or another host\'s plain http://.');
    return;
  }
  const first = location.pathname === `${base}index.html` || location.pathname === `${base}404.html`;
  if (navigator.serviceWorker.controller) {
    // Controlled already: index.html itself was asked for; the worker answers every other path.
    location.replace(first ? base : location.href);
    return;
  }
  navigator.serviceWorker.register(`${base}sw.js`, { scope: base }).then(() => navigator.serviceWorker.ready).then(() => {
    if (navigator.serviceWorker.controller) {
      location.replace(first ? base : location.href);
      return;
    }
    navigator.serviceWorker.addEventListener('controllerchange', () => location.replace(first ? base : location.href), { once: true });
  }).catch((e) => {
    say(`zrviz could not start in this browser: ${e && e.message ? e.message : e}`);
  });
}());
