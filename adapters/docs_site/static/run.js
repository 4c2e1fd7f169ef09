/* A run's page: status, period, inputs, outputs and rows, check results, the bridge, and the timings per
   statement as a bar chart (inline SVG) with their table, as `ledgerflow runs show` prints them. */
(function () {
  'use strict';
  var el = LF.el;
  var SVG = 'http://www.w3.org/2000/svg';
  var COLOURS = {load: '#718096', stage: '#2b6cb0', output: '#6b46c1', write: '#2f855a'};

  function svg(tag, attrs, text) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    if (text !== undefined) node.textContent = String(text);
    return node;
  }

  /* One bar per statement and write, its length its seconds. */
  function chart(timings) {
    var rows = timings.filter(function (t) { return t.seconds !== null; });
    var max = Math.max.apply(null, rows.map(function (t) { return t.seconds; }).concat([0.001]));
    var label = 190, width = 720, bar = 18, gap = 6;
    var height = rows.length * (bar + gap) + 24;
    var root = svg('svg', {width: width, height: height, viewBox: '0 0 ' + width + ' ' + height, role: 'img', 'class': 'timings'});
    root.appendChild(svg('title', {}, 'Seconds per statement'));
    rows.forEach(function (t, i) {
      var y = i * (bar + gap);
      var w = Math.max(1, (width - label - 70) * t.seconds / max);
      var g = svg('g', {'class': 'bar'});
      g.appendChild(svg('title', {}, t.name + ': ' + t.seconds.toFixed(3) + ' s' + (t.note ? ' (' + t.note + ')' : '')));
      g.appendChild(svg('text', {x: label - 6, y: y + bar - 5, 'text-anchor': 'end', 'font-size': 11}, t.name));
      g.appendChild(svg('rect', {x: label, y: y, width: w, height: bar, fill: COLOURS[t.kind] || '#a0aec0'}));
      g.appendChild(svg('text', {x: label + w + 4, y: y + bar - 5, 'font-size': 11}, t.seconds.toFixed(2) + ' s'));
      root.appendChild(g);
    });
    var legend = height - 8, x = label;
    Object.keys(COLOURS).forEach(function (k) {
      root.appendChild(svg('rect', {x: x, y: legend - 9, width: 10, height: 10, fill: COLOURS[k]}));
      root.appendChild(svg('text', {x: x + 14, y: legend, 'font-size': 11}, k));
      x += 70;
    });
    return root;
  }

  function keyValues(obj) {
    return Object.keys(obj || {}).map(function (k) { return k + ' ' + obj[k]; }).join(', ');
  }

  LF.start(function (data, app) {
    app.appendChild(LF.header('Run ' + data.run_id, 'Project ' + data.project + ' v' + LF.text(data.project_version) +
      ', period ' + data.period + ' (' + LF.text(data.period_start) + ' .. ' + LF.text(data.period_end) + ').'));
    app.appendChild(el('p', {}, [LF.badge(data.status, 'status-' + data.status), ' started ' + LF.text(data.started_at) +
      ', finished ' + LF.text(data.finished_at) + ', ' + LF.text(data.total_s) + ' s. ', LF.link(data.project_href, 'Project ' + data.project),
      data.batch_id ? ' · batch ' + data.batch_id : '', data.spark ? ' · Spark ' + data.spark : '']));
    if (data.error_text) app.appendChild(el('pre', {'class': 'errors'}, [data.error_text]));
    app.appendChild(LF.section('Inputs', [LF.table(['role', 'dataset', 'version', 'resolver', 'locations'], data.inputs.map(function (i) {
      return [i.role, LF.link(i.href, i.dataset), LF.text(i.version), LF.text(i.resolver), el('code', {}, [i.locations.join('\n')])];
    }), 'no input recorded')], 'inputs'));
    app.appendChild(LF.section('Outputs', [LF.table(['output', 'rows', 'location', 'registered'], data.output_list.map(function (o) {
      return [String(o.seq), LF.text(o.rows), el('code', {}, [LF.text(o.location)]),
              o.registered ? el('span', {}, [LF.link(o.registered_href, o.registered), ' v' + o.version]) : '-'];
    }), 'no output written')], 'outputs'));
    app.appendChild(LF.section('Checks', [LF.table(['check', 'kind', 'on', 'severity', 'status', 'violations', 'quarantined', 'amount impact'],
      data.checks.map(function (c) {
        return [c.name, c.kind, c.on, c.severity, LF.badge(c.status, 'check-' + c.status), LF.text(c.violations),
                LF.text(c.quarantined), keyValues(c.amount_impact) || '-'];
      }), 'the project has no check')], 'checks'));
    app.appendChild(LF.section('Bridge', [LF.table(['output', 'group', 'measure', 'input', 'changes', 'quarantined', 'output value'],
      data.bridge.map(function (b) {
        var changes = (b.changes || []).map(function (c) { return '[' + c.seq + '] ' + c.change; }).join(', ');
        if (b.not_measured) return [String(b.output), b.group ? keyValues(b.group) : 'all', b.measure, '-', 'not measured: ' + b.not_measured, '-', '-'];
        return [String(b.output), b.group ? keyValues(b.group) : 'all', b.measure, LF.text(b.input), changes || '-',
                LF.text(b.quarantined), LF.text(b.output_value)];
      }), 'no bridge recorded (the project has no check)')], 'bridge'));
    var total = 'total ' + LF.text(data.total_s) + ' s (setup: resolving and starting Spark ' + LF.text(data.setup_s) + ' s)' +
      (data.spark_jobs !== null && data.spark_jobs !== undefined ? '; ' + data.spark_jobs + ' Spark jobs' : '');
    app.appendChild(LF.section('Timings', data.timings.length ? [el('div', {'class': 'chart'}, [chart(data.timings)]), el('p', {}, [total]),
      LF.table(['statement', 'kind', 'operations', 'seconds', 'jobs', 'stages', 'tasks', 'note'], data.timings.map(function (t) {
        return [t.name, t.kind, t.operations, t.seconds === null ? '-' : t.seconds.toFixed(2), t.jobs, t.stages, t.tasks, t.note];
      }))] : [el('p', {'class': 'empty'}, ['no timings recorded'])], 'timings'));
    window.LF_READY = true;
  });
}());
