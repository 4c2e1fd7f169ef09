/* The runs page: each project-period's state (open or closed, by whom, when, why), its published run (and the
   environment it was published in), whether it is stale (and why) and its restatements; the environments (as
   envs list says them); then the runs grouped by project and period, newest first, each with its environment. */
(function () {
  'use strict';
  var el = LF.el;

  /* A project-period's restatements: each run (linked), its status, who and why, and the run it superseded. */
  function restatements(list) {
    if (!list.length) return '-';
    return el('ul', {'class': 'plain'}, list.map(function (r) {
      return el('li', {}, [LF.link(r.href, 'restatement ' + r.run_id), ' ', LF.badge(r.status, 'status-' + r.status),
        ' by ' + LF.text(r.by) + ': ' + LF.text(r.reason) + '; superseding ',
        r.supersedes_run_id ? LF.link(r.supersedes_href, r.supersedes_run_id) : 'nothing published']);
    }));
  }

  /* What the note column says of a run: its error, a restatement, what superseded it, a replay's parent. */
  function note(r) {
    if (r.error) return r.error;
    var parts = [];
    if (r.restatement) parts.push('restatement of ' + (r.restatement.supersedes_run_id || 'nothing published') + ' by ' +
      LF.text(r.restatement.by) + ': ' + LF.text(r.restatement.reason));
    if (r.superseded_by.length) parts.push('superseded by restatement ' + r.superseded_by.map(function (s) { return s.run_id; }).join(', '));
    if (r.parent_run_id) parts.push('replay of ' + r.parent_run_id);
    if (r.promotion) parts.push('promoted from ' + LF.text(r.promotion.from) + ' (run ' + r.promotion.source_run_id + ')');
    if (r.checks_failed) parts.push(r.checks_failed + ' checks not passed');
    return parts.join('; ');
  }

  function periods(data) {
    return LF.table(['period', 'project', 'state', 'closed / reopened', 'published run', 'published in', 'stale', 'restatements', 'runs'], data.periods.map(function (p) {
      var c = p.closure;
      var closure = c ? c.action + ' by ' + c.by + ' at ' + c.at + (c.note ? ' (note: ' + c.note + ')' : '') : '-';
      var stale = p.stale === null ? '-' : (p.stale ? el('details', {}, [el('summary', {}, [LF.badge('stale', 'bad')]),
        el('ul', {}, p.stale_reasons.map(function (r) { return el('li', {}, [r]); }))]) : 'no');
      return [p.period, LF.link(p.project_href, p.project), LF.badge(p.state, 'state-' + p.state), closure,
              p.published_run ? LF.link(p.published_href, p.published_run) : '-', LF.text(p.published_in), stale,
              restatements(p.restatements), String(p.runs)];
    }), 'no project-period closed or run yet');
  }

  function runs(data) {
    var groups = {};
    data.runs.forEach(function (r) { (groups[r.project] = groups[r.project] || []).push(r); });
    var names = Object.keys(groups).sort();
    if (!names.length) return [el('p', {'class': 'empty'}, ['no run recorded yet'])];
    return names.map(function (name) {
      var list = groups[name];
      return el('div', {'class': 'run-group'}, [el('h3', {}, [LF.link(list[0].project_href, name)]),
        LF.table(['period', 'run', 'env', 'status', 'started', 'seconds', 'outputs', 'rows', 'note'], list.slice().sort(function (a, b) {
          return a.period < b.period ? 1 : a.period > b.period ? -1 : 0;
        }).map(function (r) {
          return [r.period, LF.link(r.href, r.run_id), LF.text(r.env), LF.badge(r.status, 'status-' + r.status), LF.text(r.started_at),
                  LF.text(r.seconds), String(r.outputs), String(r.rows), note(r)];
        }))]);
    });
  }

  /* envs list's lines: each environment, and per project-period ahead of, behind or the same as prod. */
  function environments(data) {
    if (!data.environments.length) return [el('p', {'class': 'empty'}, ['no environment but prod'])];
    return [el('ul', {'class': 'plain'}, data.environments.map(function (line) { return el('li', {}, [el('code', {}, [line])]); }))];
  }

  LF.start(function (data, app) {
    app.appendChild(LF.header('Runs and periods', data.store ? data.runs.length + ' runs recorded in the run store. ' +
      'Periods as environment ' + data.env + ' publishes them' + (data.env === 'prod' ? '.' : ' (where it has published nothing, as prod does).') :
      'Nothing ran in this workspace yet: it has no run store (.ledgerflow/state.db).'));
    app.appendChild(LF.section('Periods', [periods(data)], 'periods'));
    app.appendChild(LF.section('Environments', environments(data), 'environments'));
    app.appendChild(LF.section('Runs by project and period', runs(data), 'runs'));
    window.LF_READY = true;
  });
}());
