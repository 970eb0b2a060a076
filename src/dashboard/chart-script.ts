/**
 * The console's one script: draws the overview's charts with uPlot from the JSON the page
 * carries (`<script type="application/json" id="history">`), then fetches `history.json`
 * every 15 s and redraws, so the charts and counts stay live without a bundler or a
 * framework. Without JavaScript the page still shows every count as text.
 */
export const CHART_SCRIPT = `'use strict';
(function () {
  var holder = document.getElementById('history');
  if (!holder || typeof uPlot === 'undefined') return;
  var base = document.body.dataset.base;
  var charts = [];
  function width(el) { return Math.max(260, el.clientWidth); }
  function draw(h) {
    charts.forEach(function (c) { c.destroy(); });
    charts = [];
    var traffic = document.getElementById('chart-traffic');
    charts.push(new uPlot({ width: width(traffic), height: 200, series: [{},
      { label: 'accepted', stroke: '#0969da' }, { label: 'submitted', stroke: '#8250df' },
      { label: 'delivered', stroke: '#1a7f37' }, { label: 'failed', stroke: '#cf222e' }] },
      [h.minutes, h.accepted, h.submitted, h.delivered, h.failed], traffic));
    var queue = document.getElementById('chart-queue');
    if (queue) charts.push(new uPlot({ width: width(queue), height: 160, spanGaps: true, series: [{},
      { label: 'transactional', stroke: '#0969da' }, { label: 'bulk', stroke: '#8250df' },
      { label: 'oldest wait (s)', stroke: '#9a6700', scale: 's' }], axes: [{}, {}, { side: 1, scale: 's', grid: { show: false } }] },
      [h.minutes, h.queueTransactional, h.queueBulk, h.oldestWaitS], queue));
    var credit = document.getElementById('chart-credit');
    if (credit) charts.push(new uPlot({ width: width(credit), height: 160, series: [{}, { label: 'credit spent', stroke: '#9a6700', fill: 'rgba(154,103,0,.1)' }] },
      [h.minutes, h.creditSpent], credit));
    var sum = function (a) { return a.reduce(function (x, y) { return x + y; }, 0); };
    ['accepted', 'submitted', 'delivered', 'failed', 'creditSpent'].forEach(function (name) {
      var el = document.getElementById('total-' + name);
      if (el) el.textContent = String(sum(h[name]));
    });
  }
  draw(JSON.parse(holder.textContent));
  setInterval(function () {
    fetch(base + '/history.json', { credentials: 'same-origin' }).then(function (r) { return r.ok ? r.json() : null; })
      .then(function (h) { if (h) draw(h); }, function () {});
  }, 15000);
  var resize;
  window.addEventListener('resize', function () { clearTimeout(resize); resize = setTimeout(function () { draw(JSON.parse(holder.textContent)); }, 200); });
})();
`;
