/* ledgerflow docs: what every page shares. Every value of LF_DATA came from a workspace's YAML files and is
   put in the page as text (textContent, attribute values set through the DOM), never as markup. */
(function () {
  'use strict';
  var LF = window.LF = {};
  LF.root = document.body.getAttribute('data-root') || '';

  /* A relative link of the site (the data holds only paths the site made: lower-case ASCII file names, docs_site/ids.py). */
  LF.href = function (rel) { return LF.root + rel; };

  /* el('a', {href: ..., class: ...}, [child, 'text', ...]): an element; strings become text nodes. */
  LF.el = function (tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) {
      var value = attrs[key];
      if (value === null || value === undefined || value === false) return;
      if (key === 'text') node.textContent = String(value);
      else if (key === 'href') node.setAttribute('href', LF.href(value));
      else if (key === 'onclick') node.addEventListener('click', value);
      else node.setAttribute(key, String(value));
    });
    (children || []).forEach(function (child) {
      if (child === null || child === undefined) return;
      node.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
    });
    return node;
  };
  var el = LF.el;

  LF.link = function (rel, label, cls) { return rel ? el('a', {href: rel, 'class': cls}, [label]) : el('span', {}, [label]); };
  LF.text = function (value) { return value === null || value === undefined || value === '' ? '-' : String(value); };

  /* A table: heads (strings) and rows (arrays of strings or nodes); empty: a line saying so. */
  LF.table = function (heads, rows, empty, cls) {
    if (!rows.length) return el('p', {'class': 'empty'}, [empty || 'none']);
    var thead = el('thead', {}, [el('tr', {}, heads.map(function (h) { return el('th', {}, [h]); }))]);
    var tbody = el('tbody', {}, rows.map(function (r) {
      return el('tr', {}, r.map(function (c) { return el('td', {}, [c === null || c === undefined ? '-' : c]); }));
    }));
    return el('table', {'class': cls || 'grid'}, [thead, tbody]);
  };

  LF.section = function (title, children, id) {
    return el('section', {id: id}, [el('h2', {}, [title])].concat(children));
  };

  LF.badge = function (label, kind) { return el('span', {'class': 'badge ' + (kind || '')}, [label]); };

  /* Numbered source lines first..last (1-based) of `lines`, highlighted as `language` when highlight.js is
     loaded (its output escapes the text it is given). */
  LF.code = function (lines, language, first, last) {
    first = first || 1;
    last = last || lines.length;
    var chosen = lines.slice(first - 1, last);
    var gutter = el('pre', {'class': 'gutter', 'aria-hidden': 'true'}, [chosen.map(function (_, i) { return first + i; }).join('\n')]);
    var code = el('code', {'class': 'language-' + language});
    var text = chosen.join('\n');
    if (window.hljs && text.length < 2000000) {
      code.innerHTML = window.hljs.highlight(text, {language: language, ignoreIllegals: true}).value;
      code.classList.add('hljs');
    } else {
      code.textContent = text;
    }
    return el('div', {'class': 'source'}, [gutter, el('pre', {'class': 'code'}, [code])]);
  };

  LF.errors = function (errors) {
    if (!errors || !errors.length) return null;
    return el('section', {'class': 'errors', id: 'errors'}, [
      el('h2', {}, [errors.length + (errors.length === 1 ? ' error' : ' errors') + ' in the workspace']),
      el('ul', {}, errors.map(function (e) {
        return el('li', {}, [el('code', {}, [e.code]), ' ', el('span', {'class': 'where'}, [e.file + (e.line ? ':' + e.line + (e.column ? ':' + e.column : '') : '')]),
          ' ', e.message, e.text ? el('span', {}, [' (at ', el('code', {}, [e.text]), ')']) : null,
          e.hint ? el('div', {'class': 'hint'}, ['Hint: ' + e.hint]) : null]);
      }))]);
  };

  /* Colours of lineage edge kinds and workspace graph roles (the legends name them). */
  LF.kindColours = {identity: '#2b6cb0', transformation: '#6b46c1', aggregation: '#b7791f', conditional: '#c05621',
                    join: '#2f855a', filter: '#c53030', group_by: '#805ad5'};
  LF.roleColours = {input: '#2b6cb0', join: '#2f855a', append: '#b7791f', output: '#6b46c1'};

  LF.legend = function (colours, descriptions) {
    return el('ul', {'class': 'legend'}, Object.keys(colours).map(function (k) {
      return el('li', {title: descriptions ? descriptions[k] || '' : ''},
                [el('span', {'class': 'swatch', style: 'background:' + colours[k]}), k]);
    }));
  };

  LF.header = function (title, subtitle) {
    var nav = el('nav', {}, [LF.link('index.html', 'Workspace graph'), LF.link('runs.html', 'Runs and periods')]);
    return el('header', {}, [nav, el('h1', {}, [title]), subtitle ? el('p', {'class': 'subtitle'}, [subtitle]) : null]);
  };

  /* Draw the page: `draw(data, app)`; an error in drawing is shown on the page and thrown on (the console). */
  LF.start = function (draw) {
    var app = document.getElementById('app');
    try {
      draw(window.LF_DATA || {}, app);
    } catch (err) {
      app.appendChild(el('p', {'class': 'errors'}, ['This page could not be drawn: ' + err]));
      throw err;
    }
  };
}());
