// The static site served under a folder of its host (a course's /~prof/zrviz/): the service worker
// (sw.js) puts the root-relative URLs the server writes in a page under the folder, and loads this
// script first in every page, which does the same for the links, forms and navigations the page's
// modules make at run time (an anchor made in script, location.assign). Without it they would leave
// the worker's scope for the host, which has no such file.
(function prefix() {
  const me = document.currentScript;
  const base = me && me.dataset ? me.dataset.base || '/' : '/';
  if (base === '/') return;
  /**
   * The URL under the site's folder for a URL of this origin outside it, or "".
   * @param {string} href
   */
  function under(href) {
    let u;
    try { u = new URL(href, location.href); } catch { return ''; }
    if (u.origin !== location.origin || u.pathname.startsWith(base) || !u.pathname.startsWith('/')) return '';
    return base + u.pathname.slice(1) + u.search + u.hash;
  }
  // A link is mended as it is used: pointed at, clicked, opened by key or in a new tab.
  const mendLink = (/** @type {Event} */ e) => {
    const t = /** @type {Element|null} */ (e.target instanceof Element ? e.target : null);
    const a = t && t.closest('a[href]');
    if (!a) return;
    const to = under(a.getAttribute('href') || '');
    if (to) a.setAttribute('href', to);
  };
  for (const ev of ['pointerdown', 'click', 'auxclick', 'keydown', 'focusin', 'contextmenu']) {
    document.addEventListener(ev, mendLink, true);
  }
  document.addEventListener('submit', (e) => {
    const f = /** @type {HTMLFormElement} */ (e.target);
    const to = under(f.getAttribute('action') || location.href);
    if (to) f.setAttribute('action', to.replace(/[?#].*$/, ''));
  }, true);
  // Links made in script (the call log's, the tree's): mended as they are made, so that what the
  // page shows is where it leads.
  const mendAttr = (/** @type {Element} */ el) => {
    for (const name of ['href', 'action']) {
      const v = el.getAttribute(name);
      if (v && v.startsWith('/') && !v.startsWith('//') && !v.startsWith(base)) el.setAttribute(name, base + v.slice(1));
    }
  };
  new MutationObserver((records) => {
    for (const r of records) {
      if (r.type === 'attributes') mendAttr(/** @type {Element} */ (r.target));
      else {
        for (const n of r.addedNodes) {
          if (!(n instanceof Element)) continue;
          if (n.matches('a[href], form[action]')) mendAttr(n);
          n.querySelectorAll('a[href], form[action]').forEach(mendAttr);
        }
      }
    }
  }).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['href', 'action'] });
  // Navigations made in script (location.assign, location.href = …): the Navigation API, where the
  // browser has it, lets one be redirected under the folder before it leaves.
  const nav = /** @type {any} */ (window).navigation;
  if (nav && typeof nav.addEventListener === 'function') {
    nav.addEventListener('navigate', (/** @type {any} */ e) => {
      if (!e.cancelable || e.hashChange || e.navigationType === 'traverse' || e.downloadRequest !== null && e.downloadRequest !== undefined) return;
      const to = under(e.destination.url);
      if (!to) return;
      e.preventDefault();
      if (e.navigationType === 'replace') location.replace(to); else location.assign(to);
    });
  }
}());
