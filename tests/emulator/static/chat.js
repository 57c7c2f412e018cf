// The emulator's chat page: plain DOM, no framework. Every text from an agent is inserted
// with textContent, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
let current = null; // the selected conversation id
let lastRendered = "";
// What the side lists last showed: they are rebuilt only when it changes, so the polling
// never swaps a button out from under a click.
let lastSide = "";

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (value !== false && value !== null && value !== undefined) node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

async function api(method, path, body) {
  const response = await fetch("/_emulator" + path, {
    method,
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || "HTTP " + response.status);
  return data;
}

function report(error) { alert(error.message || String(error)); }

$("new-key").addEventListener("click", async () => {
  try {
    const result = await api("POST", "/connect-keys", { user_id: $("user").value || undefined });
    $("key").textContent = result.connect_key;
    $("key-box").hidden = false;
  } catch (error) { report(error); }
});
$("copy-key").addEventListener("click", () => navigator.clipboard.writeText($("key").textContent));

async function answerRequest(requestId, approve) {
  try {
    const result = await api("POST", `/requests/${requestId}/${approve ? "approve" : "deny"}`);
    // The browser goes back to the app, as after the real approval page.
    window.open(result.redirect_url, "_blank");
    refreshSide();
  } catch (error) { report(error); }
}

async function refreshSide() {
  const [requests, agents] = await Promise.all([api("GET", "/requests"), api("GET", "/installations")]);
  const pending = requests.filter((item) => item.status === "pending" && !item.expired);
  const signature = JSON.stringify([current, pending, agents]);
  if (signature === lastSide) return;
  lastSide = signature;
  $("requests").replaceChildren(...(pending.length ? pending.map((item) => el("li", {},
    el("strong", {}, item.agent_name), el("div", { class: "muted" }, item.agent_description),
    el("button", { class: "primary", onclick: () => answerRequest(item.request_id, true) }, "Approve"),
    el("button", { onclick: () => answerRequest(item.request_id, false) }, "Deny"),
  )) : [el("li", { class: "muted" }, "No request waiting.")]));
  $("agents").replaceChildren(...(agents.length ? agents.map((item) => el("li",
    { class: item.conversation_id === current ? "selected" : null },
    el("span", { class: "dot" + (item.connected ? " on" : "") }),
    el("a", { href: "#", onclick: (event) => { event.preventDefault(); select(item.conversation_id); } }, item.agent_name),
    item.revoked ? el("span", { class: "muted" }, " (revoked)") :
      el("button", { onclick: () => revoke(item.agent_id) }, "Revoke"),
    el("div", { class: "muted" }, item.owner_id + " · " + item.agent_id),
  )) : [el("li", { class: "muted" }, "No agent yet.")]));
}

async function revoke(agentId) {
  if (!confirm("Revoke this agent? It will be disconnected at once.")) return;
  try { await api("POST", `/installations/${agentId}/revoke`); refreshSide(); } catch (error) { report(error); }
}

function select(conversationId) {
  current = conversationId;
  lastRendered = "";
  $("composer").hidden = false;
  refreshSide();
  refreshChat();
}

async function send(body) {
  try {
    await api("POST", `/conversations/${current}/send`, { device_id: $("device").value || "1", ...body });
    refreshChat();
  } catch (error) { report(error); }
}

function fileToBase64(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result.split(",", 2)[1]);
    reader.onerror = reject;
    reader.readAsDataURL(file);
  });
}

$("composer").addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = $("text").value;
  const files = await Promise.all([...$("files").files].map(async (file) => ({
    name: file.name, mime: file.type || "application/octet-stream", data_b64: await fileToBase64(file),
  })));
  if (!text && !files.length) return;
  const body = { text, encrypted: !$("plain").checked };
  if (files.length) body.attachments = files;
  $("text").value = "";
  $("files").value = "";
  send(body);
});

// Widgets: each kind becomes buttons or inputs that send a widget.response.
function respond(widget, value) { send({ widget_response: { ref: widget.id, value } }); }
function cancel(widget) { send({ widget_response: { ref: widget.id, cancelled: true } }); }

function widgetControls(widget, spec) {
  switch (widget.kind) {
    case "confirm": {
      const labels = spec.labels || {};
      return [el("button", { class: spec.danger ? "" : "primary", onclick: () => respond(widget, true) }, labels.yes || "Yes"),
        el("button", { onclick: () => respond(widget, false) }, labels.no || "No")];
    }
    case "choice": {
      const options = spec.options || [];
      if (!spec.multi) return options.map((option) => el("button", { onclick: () => respond(widget, option.id) }, option.label));
      const boxes = options.map((option) => el("input", { type: "checkbox", value: option.id }));
      return [...options.map((option, index) => el("label", {}, boxes[index], " ", option.label)),
        el("button", { class: "primary", onclick: () => respond(widget, boxes.filter((box) => box.checked).map((box) => box.value)) }, "Submit")];
    }
    case "permission":
      return [el("button", { class: "primary", onclick: () => respond(widget, true) }, "Allow"),
        el("button", { onclick: () => respond(widget, false) }, "Deny")];
    case "form": {
      const inputs = (spec.fields || []).map((field) => el("input", {
        name: field.name, required: !!field.required,
        type: ["number", "email", "password", "date", "time"].includes(field.type) ? field.type : "text" }));
      return [...(spec.fields || []).map((field, index) => el("label", {}, field.label || field.name, " ", inputs[index])),
        el("button", { class: "primary", onclick: () => respond(widget, Object.fromEntries(inputs.map((input) => [input.name, input.value]))) }, spec.submitLabel || "Submit")];
    }
    case "progress":
      return [el("progress", { value: spec.value, max: spec.max || 100 }),
        spec.cancellable ? el("button", { onclick: () => cancel(widget) }, "Cancel") : null];
    case "file-picker": {
      const input = el("input", { type: "file", multiple: !!spec.multiple, accept: (spec.accept || []).join(",") || null });
      return [input, el("button", { class: "primary", onclick: async () => {
        const files = await Promise.all([...input.files].map(async (file) => ({
          name: file.name, mime: file.type || "application/octet-stream", data_b64: await fileToBase64(file) })));
        if (files.length) await send({ text: "", attachments: files });
        respond(widget, files.map((file) => ({ name: file.name, mime: file.mime })));
      } }, "Send files")];
    }
    case "datetime": {
      const type = { date: "date", time: "time" }[spec.mode] || "datetime-local";
      const input = el("input", { type, min: spec.min || null, max: spec.max || null });
      return [input, el("button", { class: "primary", onclick: () => respond(widget, input.value) }, "OK")];
    }
    default:
      return [el("span", { class: "muted" }, "Unknown widget kind " + widget.kind)];
  }
}

function renderWidget(widget, patches, answered) {
  const spec = Object.assign({}, widget.spec, ...patches.map((patch) => patch.spec || {}));
  const expiresAt = patches.reduce((value, patch) => patch.expires_at || value, widget.expires_at);
  const expired = expiresAt && Date.parse(expiresAt) < Date.now();
  const box = el("div", { class: "widget" }, el("h3", {}, spec.title || widget.kind),
    spec.body ? el("p", {}, spec.body) : null);
  if (answered) box.append(el("div", { class: "muted" }, "Answered."));
  else if (expired) box.append(el("div", { class: "muted" }, "Expired."));
  else box.append(...widgetControls(widget, spec).filter(Boolean),
    widget.kind !== "progress" ? el("button", { onclick: () => cancel(widget) }, "Cancel") : null);
  return box;
}

function bubbleFor(item, patches, answers) {
  const meta = el("div", { class: "meta" }, `${item.direction === "in" ? "agent" : "you"} · device ${item.device_id}`
    + (item.encrypted ? "" : " · unencrypted") + (item.history && item.history !== "valid" ? ` · history ${item.history}` : ""));
  if (item.error) return el("div", { class: "bubble in error" }, "Could not decrypt: " + item.error, meta);
  const bubble = el("div", { class: "bubble " + item.direction });
  if (item.direction === "in" && item.kind === "widget.standard") {
    bubble.append(renderWidget(item.payload, patches[item.payload.id] || [], answers.has(item.payload.id)));
  } else if (item.direction === "in" && item.kind === "widget.update") {
    return null;
  } else if (item.kind === "chat.message") {
    const payload = item.payload || JSON.parse(item.text);
    bubble.append(payload.text || "");
    for (const file of item.files || payload.attachments || []) {
      bubble.append(el("div", {}, file.content_b64
        ? el("a", { href: `data:${file.mime};base64,${file.content_b64}`, download: file.name }, "📎 " + file.name)
        : "📎 " + file.name + (file.error ? ` (${file.error})` : "")));
    }
  } else if (item.kind === "widget.response") {
    const answer = JSON.parse(item.text);
    bubble.append(answer.cancelled ? "Cancelled" : "Answered: " + JSON.stringify(answer.value));
  } else {
    bubble.append(item.text ?? "");
  }
  bubble.append(meta);
  return bubble;
}

async function refreshChat() {
  if (!current) return;
  const data = await api("GET", `/conversations/${current}/timeline`);
  const signature = JSON.stringify(data.items.map((item) => item.message_id));
  if (signature === lastRendered) return;
  lastRendered = signature;
  $("chat-title").textContent = `${data.installation.agent_name} — ${data.installation.conversation_id}`
    + (data.installation.revoked ? " (revoked)" : "");
  const patches = {};
  const answers = new Set();
  for (const item of data.items) {
    if (item.direction === "in" && item.kind === "widget.update") (patches[item.payload.ref] ||= []).push(item.payload.patch || {});
    if (item.direction === "out" && item.kind === "widget.response") answers.add(JSON.parse(item.text).ref);
  }
  const timeline = $("timeline");
  timeline.replaceChildren(...data.items.map((item) => bubbleFor(item, patches, answers)).filter(Boolean));
  timeline.scrollTop = timeline.scrollHeight;
}

function tick() { refreshSide().catch(() => {}); refreshChat().catch(() => {}); }
tick();
setInterval(tick, 1000);
