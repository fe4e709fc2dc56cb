// Conversations kept in the browser (localStorage). A conversation is a tree of messages: editing a
// user message or regenerating a reply adds a sibling, and `leaf` says which branch is shown.

const KEY = 'ggserve.conversations.v1';
const newId = () => Date.now().toString(36) + Math.random().toString(36).slice(2, 8);

export class Store {
  constructor(onChange) {
    this.onChange = onChange;
    this.convs = [];
    this.timer = 0;
    try {
      const saved = JSON.parse(localStorage.getItem(KEY) ?? '[]');
      if (Array.isArray(saved)) this.convs = saved.filter(valid);
    } catch {
      this.convs = [];
    }
  }

  changed() {
    this.onChange();
  }
  save() {
    clearTimeout(this.timer);
    this.timer = 0;
    localStorage.setItem(KEY, JSON.stringify(this.convs));
  }
  // While a reply streams: at most one write per half second.
  saveSoon() {
    if (!this.timer) this.timer = setTimeout(() => this.save(), 500);
  }

  sorted() {
    return [...this.convs].sort((a, b) => b.updated - a.updated);
  }
  get(id) {
    return this.convs.find((c) => c.id === id);
  }
  create() {
    const c = { id: newId(), name: 'New chat', updated: Date.now(), nodes: {}, leaf: null };
    this.convs.push(c);
    this.save();
    this.changed();
    return c;
  }
  remove(id) {
    this.convs = this.convs.filter((c) => c.id !== id);
    this.save();
    this.changed();
  }
  rename(id, name) {
    const c = this.get(id);
    if (!c || !name.trim()) return;
    c.name = name.trim().slice(0, 120);
    this.save();
    this.changed();
  }

  addNode(conv, parent, role, content) {
    const node = { id: newId(), parent, role, content, created: Date.now() };
    conv.nodes[node.id] = node;
    conv.leaf = node.id;
    conv.updated = Date.now();
    this.changed();
    return node;
  }
  // Root-to-node list of messages (the branch on screen when `id` is the leaf).
  path(conv, id = conv.leaf) {
    const out = [];
    for (let n = id && conv.nodes[id]; n; n = n.parent && conv.nodes[n.parent]) out.push(n);
    return out.reverse();
  }
  siblings(conv, node) {
    return Object.values(conv.nodes)
      .filter((n) => n.parent === node.parent)
      .sort((a, b) => a.created - b.created);
  }
  // Shows the branch through `node`, down its most recent children.
  select(conv, node) {
    let n = node;
    for (;;) {
      const kids = Object.values(conv.nodes).filter((k) => k.parent === n.id);
      if (!kids.length) break;
      n = kids.reduce((a, b) => (b.created > a.created ? b : a));
    }
    conv.leaf = n.id;
    this.save();
    this.changed();
  }

  exportJson() {
    return JSON.stringify({ format: 'ggserve-conversations', version: 1, conversations: this.convs }, null, 1);
  }
  // Adds (or replaces, by id) the conversations of an export; returns how many.
  importJson(text) {
    const data = JSON.parse(text);
    const list = Array.isArray(data) ? data : data?.conversations;
    if (!Array.isArray(list)) throw new Error('not a ggserve conversations file');
    const good = list.filter(valid);
    if (!good.length) throw new Error('the file holds no conversation');
    for (const c of good) {
      this.convs = this.convs.filter((x) => x.id !== c.id);
      this.convs.push(c);
    }
    this.save();
    this.changed();
    return good.length;
  }
}

function valid(c) {
  return c && typeof c.id === 'string' && typeof c.name === 'string' && c.nodes && typeof c.nodes === 'object' &&
    (c.leaf === null || typeof c.leaf === 'string');
}
