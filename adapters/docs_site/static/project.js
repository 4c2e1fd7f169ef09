/* A project's page: its errors, operations (each with its YAML lines), outputs and their columns (each linked to
   its lineage), checks, scenario tests, runs, the whole YAML source and the compiled SQL, highlighted. */
(function () {
  'use strict';
  var el = LF.el;

  function operations(data) {
    return LF.table(['seq', 'kind', 'name', 'selector', 'YAML'], data.operations.map(function (op) {
      var yaml = '-';
      if (op.first_line) {  // drawn when first opened: a project of hundreds of operations stays quick to open
        yaml = el('details', {}, [el('summary', {}, ['lines ' + op.first_line + '-' + op.last_line])]);
        yaml.addEventListener('toggle', function () {
          if (yaml.open && yaml.childNodes.length === 1) yaml.appendChild(LF.code(data.source, 'yaml', op.first_line, op.last_line));
        });
      }
      var name = el('span', {}, [op.name, op.description ? el('div', {'class': 'muted'}, [op.description]) : null,
        op.register_as_dataset ? el('div', {'class': 'muted'}, ['registers ' + op.register_as_dataset]) : null]);
      return [String(op.seq), LF.badge(op.kind, 'kind-' + op.kind), name, op.selector ? el('code', {}, [op.selector]) : '-', yaml];
    }), 'no operation', 'grid operations');
  }

  function outputs(data) {
    if (!data.outputs.length) return [el('p', {'class': 'empty'}, [data.errors.length ? 'Not known while the project has errors.' : 'no output'])];
    return data.outputs.map(function (o) {
      return el('div', {'class': 'output'}, [
        el('h3', {}, ['Output ' + o.seq + ': ' + o.name]),
        o.registers ? el('p', {}, ['Registers the dataset ', LF.link(o.registers_href, o.registers)]) : null,
        LF.table(['column', 'type', 'lineage'], o.columns.map(function (c) {
          return [el('code', {}, [c.name]), c.type, c.lineage_href ? LF.link(c.lineage_href, 'lineage of ' + c.name, 'lineage-link') : '-'];
        }), 'no column')]);
    });
  }

  function checks(data) {
    return LF.table(['check', 'kind', 'on', 'severity', 'on violation', 'columns read', 'line'], data.checks.map(function (c) {
      return [c.name, c.kind, c.on, c.severity, LF.text(c.on_violation), c.columns.join(', ') || '-', c.line ? String(c.line) : '-'];
    }), 'no check');
  }

  function tests(data) {
    return LF.table(['test', 'file', 'period', 'given', 'expects', 'checks asserted'], data.tests.map(function (t) {
      var checks = Object.keys(t.checks).map(function (k) { return k + ': ' + t.checks[k]; }).join(', ');
      var expects = t.error ? 'error ' + t.error : (t.expect.length ? 'output ' + t.expect.join(', ') : '-');
      return [el('span', {}, [t.name, t.description ? el('div', {'class': 'muted'}, [t.description]) : null]),
              el('code', {}, [t.file]), t.period, t.given.join(', ') || '-', expects, checks || '-'];
    }), 'no scenario test names this project (tests/*.yml)');
  }

  function runs(data) {
    return LF.table(['run', 'period', 'status', 'started', 'seconds', 'rows', 'restatement'], data.runs.map(function (r) {
      var restated = r.restatement ? 'restatement of ' + (r.restatement.supersedes_run_id || 'nothing published') + ': ' +
        LF.text(r.restatement.reason) : '';
      if (r.superseded_by.length) restated += (restated ? '; ' : '') + 'superseded by ' + r.superseded_by.map(function (s) { return s.run_id; }).join(', ');
      return [LF.link(r.href, r.run_id), r.period, LF.badge(r.status, 'status-' + r.status), LF.text(r.started_at),
              LF.text(r.seconds), String(r.rows), restated || '-'];
    }), 'no run recorded yet');
  }

  LF.start(function (data, app) {
    var subtitle = 'Project v' + data.version + ' (' + data.status + '), ' + data.file + '. ' + data.description;
    app.appendChild(LF.header(data.name, subtitle));
    app.appendChild(el('p', {}, ['Input: ', LF.link(data.input.href, data.input.dataset),
      data.input.version ? ' version ' + data.input.version : ' (latest active version)',
      data.lineage_href ? el('span', {}, [' · ', LF.link(data.lineage_href, 'Column lineage', 'lineage-link')]) : null]));
    var errors = LF.errors(data.errors);
    if (errors) app.appendChild(errors);
    app.appendChild(LF.section('Operations', [operations(data)], 'operations'));
    app.appendChild(LF.section('Outputs', outputs(data), 'outputs'));
    app.appendChild(LF.section('Checks', [checks(data)], 'checks'));
    app.appendChild(LF.section('Scenario tests', [tests(data)], 'tests'));
    app.appendChild(LF.section('Runs', [runs(data)], 'runs'));
    app.appendChild(LF.section('YAML source', [data.source.length ? LF.code(data.source, 'yaml') :
      el('p', {'class': 'empty'}, ['the file could not be read'])], 'source'));
    app.appendChild(LF.section('Compiled SQL', [data.sql ? LF.code(data.sql.split('\n'), 'sql') :
      el('p', {'class': 'empty'}, ['not compiled: the project has errors'])], 'sql'));
    window.LF_READY = true;
  });
}());
