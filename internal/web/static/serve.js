// twasm serve: live updates (server-sent events) and keyboard
// navigation. It reads and writes only this site's pages: the content it
// puts in place is what the server rendered (escaped) for this address.
(function () {
  'use strict';
  var body = document.body;
  var live = body && body.getAttribute('data-live');
  var busy = false, again = false;

  // refresh fetches this page again and puts its live parts in place.
  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(location.pathname + location.search, { credentials: 'same-origin' })
      .then(function (r) { if (!r.ok) { throw new Error('HTTP ' + r.status); } return r.text(); })
      .then(function (text) {
        var doc = new DOMParser().parseFromString(text, 'text/html');
        ['#tree', 'main', '#runs', '#more'].forEach(function (sel) {
          var old = document.querySelector(sel), fresh = doc.querySelector(sel);
          if (old && fresh) { old.replaceWith(document.importNode(fresh, true)); }
        });
        if (document.querySelector('[data-slot]')) {
          // The page's own script (export's) puts results beside calls.
          var s = document.createElement('script');
          s.src = '/static/page.js';
          document.body.appendChild(s);
        }
        var st = document.getElementById('livestate');
        if (st) { st.textContent = 'updated ' + new Date().toLocaleTimeString(); }
        body.setAttribute('data-refreshed', String(Number(body.getAttribute('data-refreshed') || 0) + 1));
      })
      .catch(function () { /* the next event tries again */ })
      .then(function () {
        busy = false;
        if (again) { again = false; refresh(); }
      });
  }

  if (live && window.EventSource) {
    var es = new EventSource(live);
    es.addEventListener('grown', refresh);
    es.addEventListener('open', function () { body.setAttribute('data-live-open', '1'); });
  }

  // j / k move through the listed runs or hits, Enter opens one, / goes
  // to the search box.
  document.addEventListener('keydown', function (e) {
    var t = e.target;
    if (t && (t.tagName === 'INPUT' || t.tagName === 'SELECT' || t.tagName === 'TEXTAREA')) { return; }
    if (e.key === '/') {
      var q = document.getElementById('sq') || document.getElementById('q');
      if (q) { e.preventDefault(); q.focus(); }
      return;
    }
    if (e.key !== 'j' && e.key !== 'k') { return; }
    var links = [].slice.call(document.querySelectorAll('#runs a.title, #hits a.hitlink'));
    if (!links.length) { return; }
    var i = links.indexOf(document.activeElement);
    i = e.key === 'j' ? Math.min(links.length - 1, i + 1) : Math.max(0, i - 1);
    links[i].focus();
    e.preventDefault();
  });
  // A run's page shows one part of a long run: a link to an event of
  // another part (#seq-N), or to the step that started a child run
  // (#child-RUN, the child's link back: the run's tree, on every part,
  // names the step's seq), goes to that part's page, at it.
  function toPart() {
    var size = Number(body && body.getAttribute('data-part-size'));
    if (!size || !location.hash || document.getElementById(location.hash.slice(1))) { return; }
    var seq = 0, m = /^#seq-([0-9]+)$/.exec(location.hash), c = /^#child-([0-9a-f-]+)$/.exec(location.hash);
    if (m) { seq = Number(m[1]); }
    if (c) {
      var a = document.querySelector('#tree a[href="/s/' + c[1] + '"]');
      var step = a && a.closest('li.tstep');
      var at = step && /^#seq-([0-9]+)$/.exec(step.firstElementChild.getAttribute('href') || '');
      if (at) { seq = Number(at[1]); }
    }
    if (!seq) { return; }
    var part = Math.floor((seq - 1) / size) + 1;
    if (part >= 1 && String(part) !== body.getAttribute('data-part')) {
      location.replace(location.pathname + '?part=' + part + location.hash);
    }
  }
  toPart();
  window.addEventListener('hashchange', toPart);

  // Said once the keys and the live stream are wired (tests wait on it).
  if (body) { body.setAttribute('data-ready', '1'); }
})();
