// @ts-check
// Forms generated from the pydantic models' JSON schema: labels from field titles, help from
// descriptions, inputs from types (number with min/max, enum -> select, colour pattern ->
// picker, boolean -> switch, object -> fieldset, array -> list).  The studio holds no field list.

import { h, clear } from "./dom.js";

const COLOUR = /#\[0-9a-fA-F\]/;
const UPLOAD = /png\|jpg/;

function deref(s, root) {
  let guard = 0;
  while (s && s.$ref && guard++ < 20) {
    const name = s.$ref.split("/").pop();
    s = { ...(root.$defs || {})[name], ...Object.fromEntries(Object.entries(s).filter(([k]) => k !== "$ref")) };
  }
  return s || {};
}

/** {schema, nullable} with anyOf [X, null] unwrapped and refs resolved. */
function unwrap(s, root) {
  s = deref(s, root);
  if (Array.isArray(s.anyOf)) {
    const rest = s.anyOf.filter((x) => x.type !== "null");
    const nullable = rest.length < s.anyOf.length;
    if (rest.length === 1) {
      const inner = deref(rest[0], root);
      return { schema: { ...inner, title: s.title || inner.title, description: s.description || inner.description, default: s.default }, nullable };
    }
  }
  return { schema: s, nullable: false };
}

const key = (path) => path.join(".");

/**
 * Render the form of `value` (described by `schema`, whose $defs are in `root`) into `el`.
 * opts.path: settings path of value; opts.onChange(path, newValue); opts.omit: property names
 * left out; opts.easings: curves by easing name; opts.upload(file) -> Promise<id>.
 */
export function renderForm(el, schema, root, value, opts) {
  clear(el);
  const s = deref(schema, root);
  el.append(...objectFields(s, root, value || {}, opts.path || [], opts));
}

function objectFields(s, root, value, path, opts) {
  const out = [];
  for (const [name, prop] of Object.entries(s.properties || {})) {
    if (opts.omit && opts.omit.includes(name)) continue;
    out.push(field(prop, root, value ? value[name] : undefined, [...path, name], opts, name));
  }
  return out;
}

function field(prop, root, value, path, opts, name) {
  const { schema: s, nullable } = unwrap(prop, root);
  const title = prop.title || s.title || name;
  const help = prop.description || s.description || "";
  const id = "f-" + key(path).replace(/[^A-Za-z0-9_-]/g, "_");
  const change = (v) => opts.onChange(path, v);

  if (s.type === "object" && s.properties) {
    return h("fieldset", { dataset: { path: key(path) } }, h("legend", { title: help }, title), objectFields(s, root, value || {}, path, opts));
  }
  if (s.type === "object" && s.additionalProperties) {
    const inner = { ...s.additionalProperties, title: undefined };
    const entries = Object.entries(value || {});
    return h("fieldset", { dataset: { path: key(path) } }, h("legend", { title: help }, title),
      entries.map(([k, v]) => field({ ...inner, title: k }, root, v, [...path, k], {
        ...opts,
        onChange: (p, nv) => opts.onChange(path, { ...(value || {}), [k]: nv }),
      }, k)));
  }
  if (s.type === "array" && (s.prefixItems || s.items)) {
    const items = Array.isArray(value) ? value : [];
    return h("fieldset", { dataset: { path: key(path) } }, h("legend", { title: help }, title),
      items.map((item, i) => {
        const itemSchema = s.prefixItems ? s.prefixItems[i] || s.items : s.items;
        const sub = { ...deref(itemSchema, root) };
        sub.title = `${sub.title || title} ${i + 1}`;
        return field(sub, root, item, [...path, i], {
          ...opts,
          onChange: (p, nv) => {
            // a change deep inside item i: rebuild the array with the new item
            const rel = p.slice(path.length + 1);
            const next = items.slice();
            next[i] = setIn(items[i], rel, nv);
            opts.onChange(path, next);
          },
        }, String(i));
      }));
  }

  let ctl;
  if (Array.isArray(s.enum)) {
    ctl = h("select", { id, onchange: (e) => change(e.target.value === "" ? null : e.target.value) },
      nullable ? h("option", { value: "" }, "(default)") : null,
      s.enum.map((v) => h("option", { value: String(v), selected: value === v }, String(v))));
    if (opts.easings && opts.easings[value]) ctl = h("span", { class: "ctl" }, ctl, curve(opts.easings[value]));
  } else if (s.type === "boolean") {
    ctl = h("input", { id, type: "checkbox", checked: Boolean(value), onchange: (e) => change(e.target.checked) });
  } else if (s.type === "integer" || s.type === "number") {
    const lo = s.minimum ?? s.exclusiveMinimum;
    const hi = s.maximum ?? s.exclusiveMaximum;
    ctl = h("input", {
      id, type: "number", value: value ?? "", min: lo, max: hi, step: s.type === "integer" ? 1 : "any",
      placeholder: nullable ? "(default)" : "",
      onchange: (e) => {
        const raw = e.target.value;
        if (raw === "") return change(nullable ? null : raw);
        const n = Number(raw);
        change(Number.isNaN(n) ? raw : n);
      },
    });
  } else if (s.type === "string" && s.pattern && COLOUR.test(s.pattern)) {
    const text = h("input", { id, type: "text", value: value ?? "", placeholder: nullable ? "(theme)" : "#rrggbbaa", size: 10,
      onchange: (e) => change(e.target.value === "" && nullable ? null : e.target.value) });
    const pick = h("input", { type: "color", value: (value || "#000000").slice(0, 7), "aria-label": `${title} picker`,
      onchange: (e) => change(e.target.value + (value && value.length === 9 ? value.slice(7) : "")) });
    ctl = h("span", { class: "ctl" }, pick, text);
  } else if (s.type === "string" && s.pattern && UPLOAD.test(s.pattern) && opts.upload) {
    const img = value ? h("img", { class: "thumb", alt: "" }) : null;
    if (img && opts.image) opts.image(value).then((url) => { img.src = url; }, () => {});
    const file = h("input", { type: "file", accept: "image/png,image/jpeg,image/webp,image/gif", "aria-label": `${title} upload`,
      onchange: async (e) => { const f = e.target.files[0]; if (f) change(await opts.upload(f)); } });
    ctl = h("span", { class: "ctl" }, img, h("label", { class: "file" }, "Upload…", file),
      value ? h("button", { type: "button", onclick: () => change(null) }, "Remove") : null);
  } else {
    ctl = h("input", { id, type: "text", value: value ?? "", maxlength: s.maxLength,
      onchange: (e) => change(e.target.value === "" && nullable ? null : e.target.value) });
  }
  return h("div", { class: "field", dataset: { path: key(path) } },
    h("label", { for: id }, title), ctl, help ? h("div", { class: "help" }, help) : null);
}

function setIn(obj, rel, v) {
  if (rel.length === 0) return v;
  const [k, ...rest] = rel;
  const copy = Array.isArray(obj) ? obj.slice() : { ...(obj || {}) };
  copy[k] = setIn(copy[k], rest, v);
  return copy;
}

/** A small drawing of an easing curve from its samples (computed by the renderer). */
function curve(samples) {
  const c = h("canvas", { class: "curve", width: 48, height: 32, title: "easing curve" });
  const g = c.getContext("2d");
  const lo = Math.min(0, ...samples), hi = Math.max(1, ...samples);
  g.strokeStyle = "#39a0ff";
  g.lineWidth = 1.5;
  g.beginPath();
  samples.forEach((v, i) => {
    const x = 2 + (44 * i) / (samples.length - 1);
    const y = 30 - (26 * (v - lo)) / (hi - lo);
    if (i === 0) g.moveTo(x, y); else g.lineTo(x, y);
  });
  g.stroke();
  return c;
}

/** Show the model's messages next to their fields; returns messages that found no field. */
export function showErrors(el, errors) {
  for (const m of el.querySelectorAll(".field .msg")) m.remove();
  for (const f of el.querySelectorAll(".invalid")) f.classList.remove("invalid");
  const left = [];
  for (const e of errors || []) {
    const path = (e.loc || []).join(".");
    let target = null;
    for (const f of el.querySelectorAll("[data-path]")) {
      const p = f.dataset.path;
      if (path === p || path.startsWith(p + ".")) {
        if (!target || p.length > target.dataset.path.length) target = f;
      }
    }
    if (target && target.classList.contains("field")) {
      target.classList.add("invalid");
      target.append(h("div", { class: "msg", role: "alert" }, e.msg));
    } else if (target) {
      target.append(h("div", { class: "field invalid" }, h("div", { class: "msg", role: "alert" }, `${e.msg}`)));
    } else {
      left.push(e);
    }
  }
  return left;
}
