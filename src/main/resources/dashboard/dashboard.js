// AgentX Clarify dashboard: follows the server's change events and swaps the live part of the
// page in place, keeping open threads open. No library; the page works without it (reload).
(function () {
  'use strict';
  var live = document.getElementById('live');
  var connection = document.getElementById('connection');
  var updated = document.getElementById('updated');
  var base = document.body.getAttribute('data-base') || '';
  var busy = false;
  var again = false;

  function openThreads() {
    var ids = [];
    live.querySelectorAll('details[open][data-thread]').forEach(function (d) { ids.push(d.getAttribute('data-thread')); });
    return ids;
  }

  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    var keep = openThreads();
    var focused = document.activeElement && document.activeElement.closest ? document.activeElement.closest('details[data-thread]') : null;
    fetch(base + '/live', { cache: 'no-store', credentials: 'same-origin' }).then(function (r) {
      if (!r.ok) { throw new Error('HTTP ' + r.status); }
      return r.text();
    }).then(function (html) {
      live.innerHTML = html;
      keep.forEach(function (id) {
        var d = live.querySelector('details[data-thread="' + CSS.escape(id) + '"]');
        if (d) { d.open = true; }
      });
      if (focused) {
        var again2 = live.querySelector('details[data-thread="' + CSS.escape(focused.getAttribute('data-thread')) + '"] summary');
        if (again2) { again2.focus(); }
      }
      var snap = document.getElementById('snapshot');
      if (snap && updated) { updated.textContent = snap.getAttribute('data-at'); updated.setAttribute('datetime', snap.getAttribute('data-at')); }
      document.body.setAttribute('data-refreshes', String(Number(document.body.getAttribute('data-refreshes') || '0') + 1));
    }).catch(function () {
      if (connection) { connection.textContent = 'Reconnecting'; }
    }).then(function () {
      busy = false;
      if (again) { again = false; refresh(); }
    });
  }

  if (window.EventSource) {
    var events = new EventSource(base + '/events');
    events.addEventListener('changed', refresh);
    events.onopen = function () { if (connection) { connection.textContent = 'Live'; } };
    events.onerror = function () { if (connection) { connection.textContent = 'Reconnecting'; } };
  } else {
    setInterval(refresh, 5000);
  }
})();
