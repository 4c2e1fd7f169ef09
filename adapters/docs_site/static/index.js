/* The first page: the errors of the workspace, its graph (projects and datasets, reads and writes; laid out by
   dagre, zoom and pan, search, a click opens the node's page), and the projects and datasets as tables. */
(function () {
  'use strict';
  var el = LF.el;

  function elements(data) {
    var nodes = data.nodes.map(function (n) {
      return {group: 'nodes', data: {id: n.id, label: n.name, kind: n.kind, href: n.href, errors: n.errors ? 1 : 0}};
    });
    var edges = data.edges.map(function (e, i) {
      return {group: 'edges', data: {id: 'e' + i, source: e.from, target: e.to, role: e.role}};
    });
    /* a large graph: project to project edges through a dataset, shown when its datasets are collapsed */
    var direct = (data.direct_edges || []).map(function (e, i) {
      return {group: 'edges', classes: 'direct', data: {id: 'd' + i, source: e.from, target: e.to, role: e.dataset}};
    });
    return nodes.concat(edges, direct);
  }

  function style() {
    var roles = LF.roleColours;
    return [
      {selector: 'node', style: {label: 'data(label)', 'font-size': 12, 'text-valign': 'center', 'text-halign': 'center',
        width: function (n) { return Math.max(60, String(n.data('label')).length * 7 + 24); }, height: 30,
        'background-color': '#ebf4ff', 'border-width': 1, 'border-color': '#2b6cb0', color: '#1a202c'}},
      {selector: 'node[kind = "project"]', style: {shape: 'round-rectangle', 'background-color': '#2b6cb0', color: '#fff'}},
      {selector: 'node[kind = "dataset"]', style: {shape: 'barrel', 'background-color': '#f0fff4', 'border-color': '#2f855a'}},
      {selector: 'node[errors = 1]', style: {'border-width': 3, 'border-color': '#c53030'}},
      {selector: 'edge', style: {width: 1.5, 'curve-style': 'bezier', 'target-arrow-shape': 'triangle', 'arrow-scale': 0.9,
        label: 'data(role)', 'font-size': 9, color: '#4a5568', 'text-background-color': '#fff', 'text-background-opacity': 0.8,
        'line-color': function (e) { return roles[e.data('role')] || '#718096'; },
        'target-arrow-color': function (e) { return roles[e.data('role')] || '#718096'; }}},
      {selector: 'edge.direct', style: {display: 'none', 'line-style': 'dashed'}},
      {selector: '.faded', style: {opacity: 0.15}},
      {selector: 'node.match', style: {'border-width': 4, 'border-color': '#d69e2e'}}
    ];
  }

  /* Search: the graph's nodes by name, then the other entries of the site (restatements: by their project,
     period, reason, who and runs); Enter opens the first match. */
  function search(cy, box, results, entries) {
    var others = [];
    function apply() {
      var q = box.value.trim().toLowerCase();
      results.textContent = '';
      cy.elements().removeClass('faded match');
      others = [];
      if (!q) return cy.collection();
      var found = cy.nodes().filter(function (n) { return String(n.data('label')).toLowerCase().indexOf(q) >= 0; });
      cy.elements().not(found).not(found.connectedEdges()).addClass('faded');
      found.addClass('match');
      found.slice(0, 20).forEach(function (n) {
        results.appendChild(el('li', {}, [LF.link(n.data('href'), n.data('label')), ' ', el('span', {'class': 'muted'}, [n.data('kind')])]));
      });
      others = entries.filter(function (e) { return e.text.indexOf(q) >= 0; });
      others.slice(0, 20).forEach(function (e) {
        results.appendChild(el('li', {}, [LF.link(e.href, e.label), ' ', el('span', {'class': 'muted'}, [e.kind])]));
      });
      if (!found.length && !others.length) results.appendChild(el('li', {'class': 'muted'}, ['nothing matches']));
      return found;
    }
    box.addEventListener('input', function () {
      var found = apply();
      if (found.length) cy.animate({fit: {eles: found, padding: 60}, duration: 250});
    });
    box.addEventListener('keydown', function (ev) {
      if (ev.key !== 'Enter') return;
      var found = apply();
      if (found.length) window.location.href = LF.href(found[0].data('href'));
      else if (others.length) window.location.href = LF.href(others[0].href);
    });
  }

  function drawGraph(data, holder) {
    cytoscape.use(cytoscapeDagre);
    var large = !!data.positions;  /* positions computed by ledgerflow docs: no layout in the browser */
    var st = style();
    /* a large graph: no edge labels (the legend's colours name the roles), labels only where readable */
    if (large) st.push({selector: 'node', style: {'min-zoomed-font-size': 9}}, {selector: 'edge', style: {label: ''}});
    var cy = cytoscape({container: holder, elements: elements(data), style: st,
                        minZoom: large ? 0.002 : 0.05, maxZoom: 3, boxSelectionEnabled: false, autoungrabify: true,
                        textureOnViewport: large, hideEdgesOnViewport: large, pixelRatio: large ? 1 : 'auto'});
    cy.on('layoutstop', function () {
      window.LF_READY_AT = performance.now();  // ms since the navigation started (bench/docs_scale.py)
      window.LF_READY = true;
      holder.setAttribute('data-nodes', String(cy.nodes().length));
    });
    if (large) {
      cy.layout({name: 'preset', fit: true, padding: 20, positions: function (n) {
        var p = data.positions[n.id()];
        return {x: p[0], y: p[1]};
      }}).run();
    } else {
      cy.layout({name: 'dagre', rankDir: 'LR', nodeSep: 18, rankSep: 70, edgeSep: 8, fit: true, padding: 20}).run();
    }
    cy.on('tap', 'node', function (ev) {
      window.LF_TAPPED = ev.target.id();
      window.location.href = LF.href(ev.target.data('href'));
    });
    cy.on('mouseover', 'node', function (ev) {
      var near = ev.target.closedNeighborhood();
      cy.elements().not(near).addClass('faded');
    });
    cy.on('mouseout', 'node', function () { cy.elements().removeClass('faded'); });
    window.LF_CY = cy;
    return cy;
  }

  LF.start(function (data, app) {
    var subtitle = data.nodes.length + ' nodes: ' + data.projects.length + ' projects, ' + data.datasets.length +
      ' datasets; ' + data.runs + ' runs recorded. ledgerflow ' + data.version + ', written ' + data.generated_at + '.';
    app.appendChild(LF.header(data.workspace ? 'Workspace ' + data.workspace : 'Workspace', subtitle));
    var errors = LF.errors(data.errors);
    if (errors) app.appendChild(errors);
    var box = el('input', {type: 'search', id: 'search', placeholder: 'Search projects, datasets and restatements', 'aria-label': 'Search'});
    var results = el('ul', {id: 'search-results', 'class': 'results'});
    var holder = el('div', {id: 'graph', 'class': 'graph'});
    var fit = el('button', {type: 'button', id: 'fit'}, ['Fit']);
    var collapse = el('button', {type: 'button', id: 'collapse', hidden: !data.positions}, ['Collapse datasets']);
    app.appendChild(LF.section('Graph', [
      el('div', {'class': 'toolbar'}, [box, fit, collapse, LF.legend(LF.roleColours),
        el('span', {'class': 'muted'}, ['Scroll to zoom, drag to pan, click a node to open it.'])]),
      results, holder]));
    app.appendChild(LF.section('Projects', [LF.table(['project', 'operations', 'outputs', 'checks', 'tests', 'runs', 'errors', 'description'],
      data.projects.map(function (p) {
        return [LF.link(p.href, p.name), p.operations, p.outputs, p.checks, p.tests, p.runs,
                p.errors ? LF.badge(String(p.errors), 'bad') : '0', p.description];
      }), 'no project')]));
    app.appendChild(LF.section('Datasets', [LF.table(['dataset', 'kind', 'temporal mode', 'columns', 'readers'],
      data.datasets.map(function (d) {
        return [LF.link(d.href, d.name), d.registered ? 'registered' : 'declared', LF.text(d.temporal_mode), d.columns, d.readers];
      }), 'no dataset')]));
    if (!data.nodes.length) {
      holder.appendChild(el('p', {'class': 'empty'}, ['No graph: the workspace could not be loaded (see its errors above).']));
      window.LF_READY = true;
      return;
    }
    var cy = drawGraph(data, holder);
    fit.addEventListener('click', function () { cy.fit(undefined, 20); });
    collapse.addEventListener('click', function () {
      /* datasets hidden, projects joined by the datasets between them; again: as before */
      var collapsed = holder.classList.toggle('collapsed');
      cy.batch(function () {
        cy.nodes('[kind = "dataset"]').style('display', collapsed ? 'none' : 'element');
        cy.edges('.direct').style('display', collapsed ? 'element' : 'none');
      });
      collapse.textContent = collapsed ? 'Show datasets' : 'Collapse datasets';
      holder.setAttribute('data-shown', String(cy.nodes(':visible').length));
    });
    search(cy, box, results, data.search || []);
  });
}());
