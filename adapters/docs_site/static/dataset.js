/* A dataset's page: columns and types, temporal mode, versions (a registered one's periods, location and run),
   the resolver that finds its data with its rules, the projects reading it and the one registering it. */
(function () {
  'use strict';
  var el = LF.el;

  function projects(list, empty) {
    return LF.table(['project', 'as'], list.map(function (r) { return [LF.link(r.href, r.project), r.roles.join(', ')]; }), empty);
  }

  function resolver(r) {
    if (!r) return [el('p', {'class': 'empty'}, ['A registered dataset is read where its run wrote each version (see Versions).'])];
    var out = [el('p', {}, ['Resolver ', el('code', {}, [LF.text(r.name)]), ', chosen by ' + r.chosen_by + '.'])];
    out.push(LF.table(['rule', 'data level', 'when', 'strategy', 'path or table', 'format', 'line'], r.rules.map(function (x) {
      return [x.name, x.data_level, x.when ? el('code', {}, [x.when]) : '-', x.type,
              el('code', {}, [LF.text(x.path || x.table)]), x.format, x.line ? String(x.line) : '-'];
    }), 'the resolver has no rule'));
    if (r.overrides.length) {
      out.push(el('p', {}, ['Projects reading it through another resolver (resolver_overrides):']));
      out.push(LF.table(['project', 'resolver'], r.overrides.map(function (o) { return [LF.link(o.href, o.project), o.resolver]; })));
    }
    return out;
  }

  LF.start(function (data, app) {
    var kind = data.registered ? 'Registered dataset' : 'Declared dataset';
    var subtitle = kind + (data.temporal_mode ? ', temporal mode ' + data.temporal_mode : '') +
      (data.table ? ', table ' + data.table : '') + (data.status ? ' (' + data.status + ')' : '') +
      (data.file ? ', ' + data.file : '') + '. ' + (data.description || '');
    app.appendChild(LF.header(data.name, subtitle));
    if (data.note) app.appendChild(el('p', {'class': 'note'}, [data.note]));
    app.appendChild(LF.section('Columns', [LF.table(['column', 'type', 'nullable'], data.columns.map(function (c) {
      return [el('code', {}, [c.name]), c.type, c.nullable ? 'yes' : 'no'];
    }), 'no column known')], 'columns'));
    app.appendChild(LF.section('Versions', [LF.table(['version', 'status', 'periods', 'location', 'run'], data.versions.map(function (v) {
      return [String(v.version), v.status, v.periods.join(', ') || '-', v.location ? el('code', {}, [v.location]) : '-',
              v.run_id ? LF.link(v.run_href, v.run_id) : '-'];
    }), 'no version yet')], 'versions'));
    app.appendChild(LF.section('Resolver rules', resolver(data.resolver), 'resolver'));
    app.appendChild(LF.section('Read by', [projects(data.readers, 'no project reads it')], 'readers'));
    app.appendChild(LF.section('Registered by', [projects(data.producers, 'no project registers it')], 'producers'));
    if (data.source.length) app.appendChild(LF.section('YAML source', [LF.code(data.source, 'yaml')], 'source'));
    window.LF_READY = true;
  });
}());
