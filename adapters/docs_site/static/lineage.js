/* A project's column lineage: the output columns listed by output; the chosen one (#c=INDEX) drawn as a graph
   from its input dataset columns, through the registered datasets the path crossed, to the output column, each
   edge coloured and named by its kind (identity, transformation, ..., join, filter, group_by). */
(function () {
  'use strict';
  var el = LF.el;
  var cy = null;

  /* The registered datasets an input's path crossed, nearest first; a long path's middle as one step
     ("... N more registered datasets ...", where the data says: project_data.py _via). */
  function steps(input) {
    var out = input.via.slice();
    if (input.via_hidden) out.splice(input.via.length / 2, 0, '\u2026 ' + input.via_hidden + ' more registered datasets \u2026');
    return out;
  }

  /* Nodes and edges of one column: input columns -> registered datasets crossed (furthest first) -> output. */
  function elements(column) {
    var nodes = {}, edges = {};
    var target = 'out';
    nodes[target] = {id: target, label: column.output_name + '.' + column.column, kind: 'output'};
    column.inputs.forEach(function (input) {
      var source = 'in:' + JSON.stringify([input.dataset, input.column]);
      nodes[source] = {id: source, label: input.dataset + '.' + input.column, kind: 'input', href: input.href || ''};
      var path = [source];
      steps(input).reverse().forEach(function (step) {
        var parts = step.split(' -> ');
        var id = parts.length > 1 ? 'via:' + step : 'gap:' + source + ':' + step;
        var label = parts.length > 1 ? parts[parts.length - 1] + '\n(registered by ' + parts[0] + ')' : step;
        nodes[id] = {id: id, label: label, kind: 'via'};
        path.push(id);
      });
      path.push(target);
      for (var i = 0; i + 1 < path.length; i++) {
        var key = JSON.stringify([path[i], path[i + 1], input.kind]);
        edges[key] = {id: 'e' + Object.keys(edges).length, source: path[i], target: path[i + 1], kind: input.kind};
      }
    });
    var list = [];
    Object.keys(nodes).forEach(function (k) { list.push({group: 'nodes', data: nodes[k]}); });
    Object.keys(edges).forEach(function (k) { list.push({group: 'edges', data: edges[k]}); });
    return list;
  }

  function style() {
    var kinds = LF.kindColours;
    return [
      {selector: 'node', style: {label: 'data(label)', 'font-size': 11, 'text-valign': 'center', 'text-wrap': 'wrap',
        width: function (n) { return Math.max(70, Math.min(44, Math.max.apply(null, String(n.data('label')).split('\n').map(function (l) { return l.length; }))) * 6.5 + 20); },
        height: 34, shape: 'round-rectangle', 'background-color': '#f0fff4', 'border-width': 1, 'border-color': '#2f855a'}},
      {selector: 'node[kind = "output"]', style: {'background-color': '#2b6cb0', color: '#fff', 'border-color': '#2b6cb0'}},
      {selector: 'node[kind = "via"]', style: {'background-color': '#faf5ff', 'border-color': '#6b46c1', shape: 'barrel', height: 40}},
      {selector: 'edge', style: {width: 2, 'curve-style': 'bezier', 'target-arrow-shape': 'triangle', label: 'data(kind)',
        'font-size': 9, 'text-rotation': 'autorotate', 'text-background-color': '#fff', 'text-background-opacity': 0.85,
        'line-color': function (e) { return kinds[e.data('kind')] || '#718096'; },
        'target-arrow-color': function (e) { return kinds[e.data('kind')] || '#718096'; }}}
    ];
  }

  function chosen(data) {
    var m = /^#c=(\d+)$/.exec(window.location.hash);
    var index = m ? Number(m[1]) : 0;
    return index < data.columns.length ? index : 0;
  }

  function draw(data, holder, table, title) {
    var index = chosen(data);
    var column = data.columns[index];
    document.querySelectorAll('.column-list a').forEach(function (a) {
      a.classList.toggle('current', a.getAttribute('data-index') === String(index));
    });
    title.textContent = 'Output ' + column.output + ' (' + column.output_name + '), column ' + column.column;
    window.LF_READY = false;
    if (cy) cy.destroy();
    cy = cytoscape({container: holder, elements: elements(column), style: style(), autoungrabify: true,
                    boxSelectionEnabled: false, minZoom: 0.1, maxZoom: 3});
    cy.on('layoutstop', function () { window.LF_READY = true; });
    cy.layout({name: 'dagre', rankDir: 'LR', nodeSep: 14, rankSep: 110, fit: true, padding: 20}).run();
    cy.on('tap', 'node[kind = "input"]', function (ev) {
      if (ev.target.data('href')) window.location.href = LF.href(ev.target.data('href'));
    });
    window.LF_CY = cy;
    table.textContent = '';
    table.appendChild(LF.table(['kind', 'input column', 'through registered datasets'], column.inputs.map(function (i) {
      return [LF.badge(i.kind, 'kind-' + i.kind), el('span', {}, [LF.link(i.href, i.dataset), '.', el('code', {}, [i.column])]),
              i.via.length ? steps(i).join(', ') : '-'];
    }), 'no input column: a constant or a system value', 'grid inputs'));
    if (column.checks.length) table.appendChild(el('p', {}, ['Checked by: ' + column.checks.join(', ')]));
  }

  LF.start(function (data, app) {
    app.appendChild(LF.header('Column lineage of ' + data.project, 'Each output column with the input dataset columns it comes from and those that decide its rows, across registered datasets.'));
    app.appendChild(el('p', {}, [LF.link(data.project_href, 'Back to the project ' + data.project)]));
    if (!data.columns.length) {
      app.appendChild(el('p', {'class': 'empty'}, ['The project writes no output column.']));
      window.LF_READY = true;
      return;
    }
    var outputs = {};
    data.columns.forEach(function (c, i) { (outputs[c.output] = outputs[c.output] || []).push([c, i]); });
    var list = el('nav', {'class': 'column-list'}, Object.keys(outputs).map(function (seq) {
      var first = outputs[seq][0][0];
      return el('div', {}, [el('h3', {}, ['Output ' + seq + ': ' + first.output_name]), el('ul', {}, outputs[seq].map(function (pair) {
        var a = el('a', {href: data.project_href.replace(/^project\//, 'lineage/') + '#c=' + pair[1], 'data-index': pair[1]}, [pair[0].column]);
        return el('li', {}, [a]);
      }))]);
    }));
    var title = el('h2', {id: 'column-title'});
    var holder = el('div', {id: 'lineage-graph', 'class': 'graph lineage'});
    var table = el('div', {id: 'lineage-inputs'});
    app.appendChild(el('div', {'class': 'split'}, [list, el('div', {'class': 'main'}, [
      title, LF.legend(LF.kindColours, data.kinds), holder, table])]));
    cytoscape.use(cytoscapeDagre);
    draw(data, holder, table, title);
    window.addEventListener('hashchange', function () { draw(data, holder, table, title); });
  });
}());
