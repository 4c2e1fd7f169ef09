/* A run's page: status, period, a restatement's reason, who, superseded run and data diff (or the restatements
   that superseded the run), inputs, outputs and rows, check results, the bridge, and the timings per statement
   as a bar chart (inline SVG) with their table, as `ledgerflow runs show` prints them. */
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

  /* A value of the record as text: an object or list as JSON (the diff may hold any shape). */
  function shown(v) {
    if (v === null || v === undefined || v === '') return '-';
    return typeof v === 'object' ? JSON.stringify(v) : String(v);
  }

  function isObject(v) { return v !== null && typeof v === 'object' && !Array.isArray(v); }

  /* A list of objects as a table whose columns are every key any of them has, in the order first seen. */
  function listTable(list) {
    var keys = [];
    list.forEach(function (item) { Object.keys(item).forEach(function (k) { if (keys.indexOf(k) < 0) keys.push(k); }); });
    return LF.table(keys, list.map(function (item) { return keys.map(function (k) { return shown(item[k]); }); }));
  }

  /* Every field of an object the record holds, drawn by its shape: a list of objects as a table, an object as
     its keys and values, anything else as one line. No field is named here, so a field the record gains is
     drawn too. */
  function fields(obj, skip) {
    var parts = [];
    Object.keys(obj).forEach(function (k) {
      if (skip && skip.indexOf(k) >= 0) return;
      var v = obj[k];
      if (Array.isArray(v) && v.length && v.every(isObject)) parts.push(el('h4', {}, [k]), listTable(v));
      else if (isObject(v)) parts.push(el('h4', {}, [k]), LF.table(['', 'value'], Object.keys(v).map(function (f) { return [f, shown(v[f])]; })));
      else parts.push(el('p', {}, [el('strong', {}, [k + ': ']), Array.isArray(v) ? (v.length ? v.map(shown).join(', ') : 'none') : shown(v)]));
    });
    return parts;
  }

  function dataDiff(diff) {
    if (!diff) return [el('p', {'class': 'empty'}, ['no data diff recorded (the restatement failed before it was computed)'])];
    var outputs = Array.isArray(diff.outputs) ? diff.outputs : [];
    var parts = outputs.map(function (o) {
      var title = 'Output ' + shown(o.seq) + ' ' + shown(o.name) + (o.status ? ' (' + o.status + ')' : '');
      return el('div', {'class': 'diff-output'}, [el('h3', {}, [title])].concat(fields(o, ['seq', 'name', 'status'])));
    });
    return parts.concat(fields(diff, ['outputs']));
  }

  function restatement(r) {
    var head = r.published ? ['Restatement of a closed period, superseding ',
      r.supersedes_run_id ? LF.link(r.supersedes_href, 'run ' + r.supersedes_run_id) : 'nothing published', '.'] :
      ['Restatement that did not complete: ', r.supersedes_run_id ? LF.link(r.supersedes_href, 'run ' + r.supersedes_run_id) : 'nothing',
       ' stays published.'];
    var parts = [el('p', {'class': 'note'}, head.concat([' Reason: ', LF.text(r.reason), '. By: ', LF.text(r.by), '.']))];
    if (r.superseded_outputs.length) parts.push(el('h3', {}, ['Superseded outputs (their rows stay readable)']), listTable(r.superseded_outputs));
    if (r.emptied_outputs.length) parts.push(el('h3', {}, [r.published ? 'Outputs published empty' : 'Outputs that would have been published empty']),
      listTable(r.emptied_outputs));
    parts.push(el('h3', {}, ['Data diff against the superseded rows']));
    return parts.concat(dataDiff(r.data_diff));
  }

  LF.start(function (data, app) {
    app.appendChild(LF.header('Run ' + data.run_id, 'Project ' + data.project + ' v' + LF.text(data.project_version) +
      ', period ' + data.period + ' (' + LF.text(data.period_start) + ' .. ' + LF.text(data.period_end) + ').'));
    app.appendChild(el('p', {}, [LF.badge(data.status, 'status-' + data.status), ' started ' + LF.text(data.started_at) +
      ', finished ' + LF.text(data.finished_at) + ', ' + LF.text(data.total_s) + ' s. ', LF.link(data.project_href, 'Project ' + data.project),
      data.batch_id ? ' · batch ' + data.batch_id : '', data.spark ? ' · Spark ' + data.spark : '']));
    if (data.error_text) app.appendChild(el('pre', {'class': 'errors'}, [data.error_text]));
    if (data.restatement) app.appendChild(LF.section('Restatement', restatement(data.restatement), 'restatement'));
    if (data.superseded_by.length) app.appendChild(LF.section('Superseded', data.superseded_by.map(function (s) {
      return el('p', {'class': 'note'}, ['Superseded by restatement ', LF.link(s.href, 'run ' + s.run_id), ' at ' + LF.text(s.finished_at) +
        ' (reason: ' + LF.text(s.reason) + ', by ' + LF.text(s.by) + '); the rows this run published stay readable.']);
    }), 'superseded'));
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
