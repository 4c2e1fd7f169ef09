/* Draw one page of a docs site in Node with a minimal DOM (no browser, no network) and print what it shows as
   JSON: {text, links: [[href, text]], sections: [id]}. Usage: node docs_site_dom.js SITE PAGE.
   The page's scripts are read from its HTML shell and run in order, the vendored libraries left out: the run
   and runs pages need none. tests/test_docs_site.py uses it where the browser tests cannot run. */
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');

class Node {
  constructor(tag, text) { this.tag = tag; this.attrs = {}; this.children = []; this.text = text; this.classList = {add() {}}; }
  setAttribute(k, v) { this.attrs[k] = String(v); }
  getAttribute(k) { return this.attrs[k] === undefined ? null : this.attrs[k]; }
  appendChild(c) { this.children.push(c); return c; }
  addEventListener() {}
  set textContent(v) { this.children = [new Node('#text', String(v))]; }
  get textContent() { return this.text !== undefined ? this.text : this.children.map((c) => c.textContent).join(''); }
  set innerHTML(v) { this.textContent = v; }
  walk(fn) { fn(this); this.children.forEach((c) => c.walk(fn)); }
}

const [site, page] = process.argv.slice(2);
const app = new Node('div');
const body = new Node('body');
const shell = fs.readFileSync(path.join(site, page), 'utf8');
body.setAttribute('data-root', (shell.match(/data-root="([^"]*)"/) || ['', ''])[1]);
const document = {
  body,
  createElement: (tag) => new Node(tag),
  createElementNS: (_, tag) => new Node(tag),
  createTextNode: (text) => new Node('#text', text),
  getElementById: (id) => (id === 'app' ? app : null),
};
const context = {document, performance: {now: () => 0}, JSON, Object, Array, Math, String};
context.window = context;
vm.createContext(context);
for (const [, src] of shell.matchAll(/<script src="([^"]+)"><\/script>/g)) {
  if (src.includes('/vendor/')) continue;
  vm.runInContext(fs.readFileSync(path.join(path.dirname(path.join(site, page)), src), 'utf8'), context, {filename: src});
}
const links = [];
const sections = [];
app.walk((n) => {
  if (n.tag === 'a') links.push([n.getAttribute('href'), n.textContent]);
  if (n.tag === 'section' && n.getAttribute('id')) sections.push(n.getAttribute('id'));
});
process.stdout.write(JSON.stringify({text: app.textContent, links, sections}));
