// The static site's first page (index.html, and 404.html for a deep link on hosts that serve it):
// it installs the service worker that runs zrviz (sw.js) and then loads the page asked for, which
// the worker answers. Nothing here talks to any other host.
(function boot() {
  const status = document.getElementById('status');
  /** @param {string} msg */
  function say(msg) { if (status) status.textContent = msg; }
  if (!('serviceWorker' in navigator) || !window.isSecureContext) {
    say('zrviz runs here as a service worker, which this browser allows only on https:// or http://localhost pages. ' +
      'Serve this folder over one (for example: python3 -m http.server -d DIR, then open http://localhost:8000/), ' +
      'not from a file:// path.');
    return;
  }
  if (navigator.serviceWorker.controller) {
    // Controlled already: /index.html itself was asked for; the worker answers every other path.
    location.replace(location.pathname === '/index.html' || location.pathname === '/404.html' ? '/' : location.href);
    return;
  }
  navigator.serviceWorker.register('/sw.js', { scope: '/' }).then(() => navigator.serviceWorker.ready).then(() => {
    if (navigator.serviceWorker.controller) {
      location.reload();
      return;
    }
    navigator.serviceWorker.addEventListener('controllerchange', () => location.reload(), { once: true });
  }).catch((e) => {
    say(`zrviz could not start in this browser: ${e && e.message ? e.message : e}`);
  });
}());
