// The emulator's chat page: plain DOM, no framework. Every text from an agent is inserted
// with textContent, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
let current = null; // the selected conversation id
let lastRendered = "";
// What the side lists last showed: they are rebuilt only when it changes, so the polling
// never swaps a button out from under a click.
let lastSide = "";
// The connection key shown, until a request spends it.
let shownKey = null;
let lastAgents = []; // the agents last listed: a new group gets those not revoked
const COPIED_FEEDBACK_MS = 2000;
// Pictures an agent sends show inline; other files (and SVG, which can carry scripts when
// opened) only as download links. Audio plays in an <audio> player. The emulator serves
// each file decrypted, and only audio and these pictures with their own type (chat_files.py).
const INLINE_IMAGE_TYPES = ["image/jpeg", "image/png", "image/gif", "image/webp"];
// Pacerelle's largest blob (25 MiB) holds a file and its 16-byte GCM tag. The admin `send`
// body takes such a file in base64 (app.py).
const MAX_UPLOAD_BYTES = 25 * 1024 * 1024 - 16;
// How long the page waits for an audio file's metadata before sending it without duration.
const MEASURE_TIMEOUT_MS = 5000;
// A recording stops by itself after this long.
const MAX_RECORDING_MS = 5 * 60 * 1000;

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
    shownKey = result.connect_key;
    $("key").textContent = result.connect_key;
    $("key-box").hidden = false;
    $("key-used").hidden = true;
  } catch (error) { report(error); }
});
$("copy-key").addEventListener("click", async () => {
  const button = $("copy-key");
  try {
    await navigator.clipboard.writeText($("key").textContent);
    button.textContent = "Copied ✓";
  } catch {
    // No clipboard (an insecure origin): select the key for Ctrl+C instead.
    getSelection().selectAllChildren($("key"));
    button.textContent = "Selected: press Ctrl+C";
  }
  setTimeout(() => { button.textContent = "Copy"; }, COPIED_FEEDBACK_MS);
});

// A spent key is useless: clear it so nobody pastes it again.
async function refreshKey() {
  if (!shownKey) return;
  const status = await api("GET", `/connect-keys/${encodeURIComponent(shownKey)}`);
  if (!status.used) return;
  shownKey = null;
  $("key").textContent = "";
  $("key-box").hidden = true;
  $("key-used").hidden = false;
}

async function answerRequest(requestId, approve) {
  try {
    const result = await api("POST", `/requests/${requestId}/${approve ? "approve" : "deny"}`);
    // The browser goes back to the app, as after the real approval page.
    window.open(result.redirect_url, "_blank");
    refreshSide();
  } catch (error) { report(error); }
}

async function refreshSide() {
  const [requests, agents, groups] = await Promise.all(
    [api("GET", "/requests"), api("GET", "/installations"), api("GET", "/groups")]);
  const pending = requests.filter((item) => item.status === "pending" && !item.expired);
  // "Approve the request below" only while one waits: not after the approval.
  $("approve-below").hidden = !pending.length;
  const signature = JSON.stringify([current, pending, agents, groups]);
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
    item.verification_code ? el("div", { class: "muted code", title: "The agent's verification code" },
      "Code " + item.verification_code) : null,
  )) : [el("li", { class: "muted" }, "No agent yet.")]));
  $("groups").replaceChildren(...(groups.length ? groups.map((item) => el("li",
    { class: item.conversation_id === current ? "selected" : null },
    el("a", { href: "#", onclick: (event) => { event.preventDefault(); select(item.conversation_id); } }, item.name),
    el("div", { class: "muted" }, item.members.join(", ") + " · epoch " + item.epoch),
    el("button", { onclick: () => addMember(item.conversation_id) }, "Add member"),
  )) : [el("li", { class: "muted" }, "No group yet.")]));
  lastAgents = agents;
}

// A group of the members typed, with every agent not revoked (the admin API's /groups).
$("new-group").addEventListener("submit", async (event) => {
  event.preventDefault();
  const members = $("group-members").value.split(/[\s,]+/).filter(Boolean);
  const agentIds = lastAgents.filter((item) => !item.revoked).map((item) => item.agent_id);
  try {
    await api("POST", "/groups", { name: $("group-name").value.trim(), members, agent_ids: agentIds });
    $("group-name").value = "";
    $("group-members").value = "";
    refreshSide();
  } catch (error) { report(error); }
});

async function addMember(conversationId) {
  const userId = (prompt("User id of the new member (for example usr_ben)") || "").trim();
  if (!userId) return;
  try { await api("POST", `/groups/${conversationId}/members`, { add: [userId] }); refreshSide(); } catch (error) { report(error); }
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
    // `user_id` picks the member who writes in a group; a direct conversation ignores it.
    await api("POST", `/conversations/${current}/send`,
      { device_id: $("device").value || "1", user_id: $("user").value || undefined, ...body });
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

// The duration a Pacerelle app sends with a voice note, read from the audio's metadata.
function measureDuration(blob) {
  return new Promise((resolve) => {
    const audio = new Audio();
    const url = URL.createObjectURL(blob);
    let finished = false;
    const done = (ms) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      URL.revokeObjectURL(url);
      resolve(ms);
    };
    const timer = setTimeout(() => done(undefined), MEASURE_TIMEOUT_MS);
    const measured = () => {
      if (Number.isFinite(audio.duration) && audio.duration > 0) done(Math.round(audio.duration * 1000));
    };
    audio.preload = "metadata";
    audio.addEventListener("loadedmetadata", () => {
      measured();
      // WebM from MediaRecorder tells its duration only once its end was read.
      if (!finished) audio.currentTime = Number.MAX_SAFE_INTEGER;
    });
    audio.addEventListener("durationchange", measured);
    audio.addEventListener("error", () => done(undefined));
    audio.src = url;
  });
}

// A file as the admin `send` takes it; audio goes as a voice note, with its duration.
async function attachmentOf(file, durationMs) {
  if (file.size > MAX_UPLOAD_BYTES) throw new Error(`${file.name} is too large: files go as blobs of at most 25 MiB`);
  const item = { name: file.name, mime: file.type || "application/octet-stream", data_b64: await fileToBase64(file) };
  if (item.mime.startsWith("audio/")) {
    const ms = durationMs ?? await measureDuration(file);
    if (ms !== undefined) item.duration_ms = ms;
  }
  return item;
}

$("voice").addEventListener("change", async () => {
  const [file] = $("voice").files;
  $("voice").value = "";
  if (!file) return;
  try {
    await send({ text: "", encrypted: !$("plain").checked, attachments: [await attachmentOf(file)] });
  } catch (error) { report(error); }
});

// Recording in the page: MediaRecorder needs a secure context (localhost is one).
let recorder = null;
if (window.isSecureContext && navigator.mediaDevices && window.MediaRecorder) $("record").hidden = false;
$("record").addEventListener("click", async () => {
  if (recorder) { recorder.stop(); return; }
  try {
    const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    const chunks = [];
    const started = performance.now();
    const active = recorder = new MediaRecorder(stream);
    const limit = setTimeout(() => active.state === "recording" && active.stop(), MAX_RECORDING_MS);
    active.addEventListener("dataavailable", (event) => chunks.push(event.data));
    active.addEventListener("stop", async () => {
      clearTimeout(limit);
      for (const track of stream.getTracks()) track.stop();
      recorder = null;
      $("record").textContent = "● Record";
      // The elapsed time is the duration: MediaRecorder's WebM carries none.
      const elapsed = Math.round(performance.now() - started);
      const mime = (active.mimeType || "audio/webm").split(";")[0];
      const file = new File(chunks, "voice-note." + (mime.split("/")[1] || "webm"), { type: mime });
      try { await send({ text: "", attachments: [await attachmentOf(file, elapsed)] }); } catch (error) { report(error); }
    });
    active.start();
    $("record").textContent = "■ Stop";
  } catch (error) { recorder = null; report(error); }
});

$("composer").addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = $("text").value;
  let files;
  try {
    files = await Promise.all([...$("files").files].map((file) => attachmentOf(file)));
  } catch (error) { report(error); return; }
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
      return [el("button", { class: spec.danger ? "danger" : "primary", onclick: () => respond(widget, true) }, labels.yes || "Yes"),
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

// What a person reads for an answer: the label they chose, not the wire value.
function answerLabel(widget, spec, response) {
  if (response.cancelled) return "Cancelled";
  const value = response.value;
  if (!widget) return JSON.stringify(value);
  switch (widget.kind) {
    case "confirm": {
      const labels = spec.labels || {};
      return value === true ? labels.yes || "Yes" : value === false ? labels.no || "No" : JSON.stringify(value);
    }
    case "choice": {
      const names = Object.fromEntries((spec.options || []).map((option) => [option.id, option.label]));
      return [].concat(value).map((id) => names[id] ?? String(id)).join(", ");
    }
    case "permission":
      return value === true ? "Allow" : value === false ? "Deny" : JSON.stringify(value);
    case "form": {
      const names = Object.fromEntries((spec.fields || []).map((field) => [field.name, field.label || field.name]));
      return Object.entries(value || {}).map(([name, text]) => `${names[name] ?? name}: ${text}`).join(", ");
    }
    case "file-picker":
      return (value || []).map((file) => file.name).join(", ") || "No file";
    default:
      return typeof value === "string" ? value : JSON.stringify(value);
  }
}

function widgetSpec(widget, patches) {
  return Object.assign({}, widget.spec, ...patches.map((patch) => patch.spec || {}));
}

function renderWidget(widget, patches, answer) {
  const spec = widgetSpec(widget, patches);
  const expiresAt = patches.reduce((value, patch) => patch.expires_at || value, widget.expires_at);
  const expired = expiresAt && Date.parse(expiresAt) < Date.now();
  const box = el("div", { class: "widget" + (spec.danger ? " danger" : "") }, el("h3", {}, spec.title || widget.kind),
    spec.body ? el("p", {}, spec.body) : null);
  if (answer) box.append(el("div", { class: "muted" }, "Answered: ", el("span", { class: "answer" }, answerLabel(widget, spec, answer))));
  else if (expired) box.append(el("div", { class: "muted" }, "Expired."));
  else box.append(...widgetControls(widget, spec).filter(Boolean),
    widget.kind !== "progress" ? el("button", { onclick: () => cancel(widget) }, "Cancel") : null);
  return box;
}

function formatDuration(ms) {
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
}

// Where the emulator serves a message's file, decrypted (chat_files.py).
function fileUrl(item, file) {
  return `/_emulator/conversations/${encodeURIComponent(current)}/files/`
    + `${encodeURIComponent(item.message_id)}/${encodeURIComponent(String(file.id))}`;
}

function fileView(item, file) {
  const name = String(file.name ?? "file");
  if (file.error || file.id === undefined) return el("div", {}, "Attachment " + name + (file.error ? ` (${file.error})` : ""));
  const url = fileUrl(item, file);
  const mime = String(file.mime ?? "").toLowerCase();
  const download = el("a", { href: url, download: name }, "Download " + name);
  if (mime.startsWith("audio/")) {
    const duration = Number.isInteger(file.duration_ms) ? " · " + formatDuration(file.duration_ms) : "";
    return el("div", { class: "voice-note" }, el("div", { class: "voice-label" }, "Voice note" + duration),
      el("audio", { controls: true, preload: "metadata", src: url }), download);
  }
  return el("div", {},
    INLINE_IMAGE_TYPES.includes(mime) ? el("img", { class: "inline-image", src: url, alt: name }) : null, download);
}

function bubbleFor(item, patches, answers, widgets) {
  const meta = el("div", { class: "meta" }, `${item.direction === "in" ? "agent" : "you"} · device ${item.device_id}`
    + (item.encrypted ? "" : " · unencrypted") + (item.history && item.history !== "valid" ? ` · history ${item.history}` : ""));
  if (item.error) return el("div", { class: "bubble in error" }, "Could not decrypt: " + item.error, meta);
  const bubble = el("div", { class: "bubble " + item.direction });
  if (item.direction === "in" && item.kind === "widget.standard") {
    bubble.append(renderWidget(item.payload, patches[item.payload.id] || [], answers.get(item.payload.id)));
  } else if (item.direction === "in" && item.kind === "widget.update") {
    return null;
  } else if (item.kind === "chat.message") {
    const payload = item.payload || JSON.parse(item.text);
    bubble.append(payload.text || "");
    for (const file of item.files || payload.attachments || []) bubble.append(fileView(item, file));
  } else if (item.kind === "widget.response") {
    const answer = JSON.parse(item.text);
    const widget = widgets[answer.ref];
    const label = answerLabel(widget, widget ? widgetSpec(widget, patches[answer.ref] || []) : {}, answer);
    bubble.append(answer.cancelled ? "Cancelled" : el("span", {}, "Answered: ", el("span", { class: "answer" }, label)));
  } else {
    bubble.append(item.text ?? "");
  }
  bubble.append(meta);
  return bubble;
}

async function refreshChat() {
  if (!current) return;
  const as = new URLSearchParams({ user_id: $("user").value || "", device_id: $("device").value || "1" });
  const data = await api("GET", `/conversations/${current}/timeline?${as}`);
  const signature = JSON.stringify([data.items.map((item) => item.message_id), data.agent_verification_code,
    data.devices, $("device").value, $("user").value]);
  if (signature === lastRendered) return;
  lastRendered = signature;
  renderCodes(data);
  $("chat-title").textContent = `${data.installation.agent_name} — ${data.installation.conversation_id}`
    + (data.installation.revoked ? " (revoked)" : "")
    + (data.group ? ` · group of ${data.group.members.join(", ")}, as ${$("user").value}` : "");
  const patches = {};
  const answers = new Map();
  const widgets = {};
  for (const item of data.items) {
    if (item.direction === "in" && item.kind === "widget.standard") widgets[item.payload.id] = item.payload;
    if (item.direction === "in" && item.kind === "widget.update") (patches[item.payload.ref] ||= []).push(item.payload.patch || {});
    if (item.direction === "out" && item.kind === "widget.response") {
      const response = JSON.parse(item.text);
      answers.set(response.ref, response);
    }
  }
  const timeline = $("timeline");
  timeline.replaceChildren(...data.items.map((item) => bubbleFor(item, patches, answers, widgets)).filter(Boolean));
  timeline.scrollTop = timeline.scrollHeight;
}

// The codes a person compares with Home Assistant's: the agent's, and each of their devices'.
function renderCodes(data) {
  const rows = [el("strong", {}, "Agent"), el("code", {}, data.agent_verification_code || "no key published yet")];
  const mine = $("device").value || "1";
  for (const device of data.devices) {
    rows.push(el("strong", {}, `Device ${device.device_id}` + (device.device_id === mine ? " (this one)" : "")),
      el("code", {}, device.verification_code));
  }
  if (!data.devices.some((device) => device.device_id === mine)) {
    rows.push(el("strong", {}, `Device ${mine} (this one)`), el("span", { class: "muted" }, "gets its key with its first message"));
  }
  $("codes").replaceChildren(el("span", { class: "muted", style: "grid-column: 1 / -1" },
    "Verification codes: compare them with the ones Home Assistant shows."), ...rows);
  $("codes").hidden = false;
}

function tick() { refreshSide().catch(() => {}); refreshChat().catch(() => {}); refreshKey().catch(() => {}); }
tick();
setInterval(tick, 1000);
