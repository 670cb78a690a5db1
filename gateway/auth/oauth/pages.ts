/**
 * The sign-in, consent and error pages of the built-in authorization server: server-rendered HTML with
 * inline CSS, no script and no build step. Every value is HTML-escaped; nothing secret is ever rendered
 * (the key and secret fields are never pre-filled). Accessible by construction: one `<h1>`, labelled
 * fields, a fieldset/legend for the scope choices, `role="alert"` on errors, visible focus, and
 * colours with at least 4.5:1 contrast.
 */

export const escapeHtml = (value: string): string =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const STYLE = `
:root { color-scheme: light; --ink: #1b1f24; --muted: #4a5360; --line: #c9d1db; --accent: #0b57d0; --accent-ink: #ffffff; --warn-bg: #fff4e5; --warn-ink: #6b3a00; --err-bg: #fdecea; --err-ink: #8a1c12; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; color: var(--ink); background: #f3f5f8; }
main { max-width: 30rem; margin: 3rem auto; padding: 2rem; background: #fff; border: 1px solid var(--line); border-radius: 12px; }
h1 { font-size: 1.4rem; margin: 0 0 .5rem; }
p { margin: .5rem 0 1rem; }
.muted { color: var(--muted); font-size: .95rem; }
label { display: block; font-weight: 600; margin: 1rem 0 .25rem; }
input[type=text], input[type=password] { width: 100%; padding: .6rem .7rem; font: inherit; border: 1px solid #7a8594; border-radius: 8px; }
input:focus-visible, button:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
fieldset { border: 1px solid var(--line); border-radius: 8px; margin: 1rem 0; padding: .5rem 1rem 1rem; }
legend { font-weight: 600; padding: 0 .25rem; }
.scope { display: flex; gap: .6rem; align-items: center; margin: .4rem 0; font-weight: 400; }
.scope input { width: 1.1rem; height: 1.1rem; flex: none; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: .92em; background: #eef1f5; padding: .05rem .3rem; border-radius: 4px; }
.actions { display: flex; gap: .75rem; margin-top: 1.5rem; }
button { font: inherit; font-weight: 600; padding: .6rem 1.2rem; border-radius: 8px; border: 1px solid var(--accent); cursor: pointer; }
button.primary { background: var(--accent); color: var(--accent-ink); }
button.secondary { background: #fff; color: var(--accent); }
.alert { background: var(--err-bg); color: var(--err-ink); border-radius: 8px; padding: .75rem 1rem; }
.warning { background: var(--warn-bg); color: var(--warn-ink); border-radius: 8px; padding: .75rem 1rem; }
details { margin: .5rem 0 1rem; } summary { cursor: pointer; } details ul { margin: .5rem 0 0; padding-left: 1.2rem; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 1rem 0; }
dt { font-weight: 600; } dd { margin: 0; overflow-wrap: anywhere; }
`;

function layout(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>`;
}

/** What the pages say about the client asking for access. */
export interface ClientView {
  /** client_name, else the client_id. */
  name: string;
  clientId: string;
  /** Host of the redirect URI the code goes to (MCP 2026-07-28 security considerations: MUST be shown). */
  redirectHost: string;
  /** Every registered redirect URI is on localhost: shown with a warning (same section, SHOULD). */
  loopbackOnly: boolean;
  /** The redirect URI's private-use scheme (RFC 8252 §7.1), when it has one: `redirectHost` is then the URI less its query, shown with a warning that an app on this device gets the code. */
  appScheme?: string;
}

export function signInPage(view: { action: string; csrf: string; client: ClientView; serviceName: string; error?: string; abortAction: string }): string {
  const { client } = view;
  return layout(
    `Sign in - ${view.serviceName}`,
    `
<h1>Sign in to ${escapeHtml(view.serviceName)}</h1>
<p><strong>${escapeHtml(client.name)}</strong> wants to connect to your account. Sign in with your platform API key and secret to continue.</p>
${view.error ? `<p class="alert" role="alert" id="sign-in-error">${escapeHtml(view.error)}</p>` : ''}
<form method="post" action="${escapeHtml(view.action)}" autocomplete="off">
<input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">
<label for="key">API key</label>
<input id="key" name="key" type="text" required autocomplete="username" spellcheck="false" autocapitalize="off" ${view.error ? 'aria-invalid="true" aria-describedby="sign-in-error"' : ''}>
<label for="secret">API secret</label>
<input id="secret" name="secret" type="password" required autocomplete="current-password">
<div class="actions"><button class="primary" type="submit">Sign in</button></div>
</form>
<form method="post" action="${escapeHtml(view.abortAction)}">
<input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">
<p class="muted">Not you, or not expecting this? <button class="secondary" type="submit">Cancel</button></p>
</form>
<p class="muted">The key and secret stay on this server: the application only receives an access token, and you choose which permissions it gets on the next page.</p>`,
  );
}

export interface ScopeChoice {
  scope: string;
  /** The key holds it: offered as a checkbox; otherwise listed as unavailable. */
  available: boolean;
  /** What the scope allows, in one line (`oauth.scopeDescriptions`). */
  description?: string;
}

/** A scope as the pages show it: its description when the configuration has one, with the identifier beside it. */
function scopeLabel(choice: ScopeChoice): string {
  return choice.description
    ? `${escapeHtml(choice.description)} <code class="muted">${escapeHtml(choice.scope)}</code>`
    : `<code>${escapeHtml(choice.scope)}</code>`;
}

export function consentPage(view: {
  action: string;
  csrf: string;
  client: ClientView;
  serviceName: string;
  scopes: ScopeChoice[];
  resource: string;
  error?: string;
}): string {
  const { client } = view;
  const offered = view.scopes.filter((s) => s.available);
  const missing = view.scopes.filter((s) => !s.available);
  // Nothing to grant: an Allow with nothing to tick only answered "choose at least one", and the client heard
  // nothing until the user found Deny (try-out). One way on: back to the application, which gets access_denied.
  if (offered.length === 0) return nothingHeldPage(view, missing);
  return layout(
    `Allow access - ${view.serviceName}`,
    `
<h1>Allow ${escapeHtml(client.name)} to use your account?</h1>
<dl>
<dt>Application</dt><dd>${escapeHtml(client.name)}${client.name !== client.clientId && /^https?:/.test(client.clientId) ? ` <span class="muted">(${escapeHtml(client.clientId)})</span>` : ''}</dd>
<dt>Returns to</dt><dd><code>${escapeHtml(client.redirectHost)}</code></dd>
<dt>Server</dt><dd><code>${escapeHtml(view.resource)}</code></dd>
</dl>
${client.loopbackOnly ? `<p class="warning" role="note">This application returns to <code>${escapeHtml(client.redirectHost)}</code> on your own computer. Only continue if you started this connection from an application on this computer.</p>` : ''}
${client.appScheme ? `<p class="warning" role="note">This returns to an application on this device that opens <code>${escapeHtml(client.appScheme)}:</code> links, not to a website; the address above is what that application chose. Only continue if you started this connection from an application on this device.</p>` : ''}
${view.error ? `<p class="alert" role="alert">${escapeHtml(view.error)}</p>` : ''}
<form method="post" action="${escapeHtml(view.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">
<fieldset>
<legend>Permissions to grant</legend>
${offered.map((s, i) => `<label class="scope" for="scope-${i}"><input id="scope-${i}" type="checkbox" name="scope" value="${escapeHtml(s.scope)}" checked> <span>${scopeLabel(s)}</span></label>`).join('\n')}
</fieldset>
${missing.length ? `<details class="muted"><summary>${missing.length} more ${missing.length === 1 ? 'permission' : 'permissions'} asked for but not held by your key (not granted)</summary><ul>${missing.map((s) => `<li>${scopeLabel(s)}</li>`).join('')}</ul></details>` : ''}
<p class="muted">Untick what the application should not have. It can only ever do what your key allows.</p>
<div class="actions">
<button class="primary" type="submit" name="decision" value="allow">Allow</button>
<button class="secondary" type="submit" name="decision" value="deny">Deny</button>
</div>
</form>`,
  );
}

/** The consent page of a key that holds none of the scopes asked for: says so, lists them, and offers only the way back. */
function nothingHeldPage(
  view: { action: string; csrf: string; client: ClientView; serviceName: string; resource: string; error?: string },
  asked: ScopeChoice[],
) {
  const { client } = view;
  return layout(
    `No access to grant - ${view.serviceName}`,
    `
<h1>Your key cannot give ${escapeHtml(client.name)} what it asked for</h1>
<p>The key you signed in with holds none of the permissions this application asked for on <code>${escapeHtml(view.resource)}</code>, so there is nothing to allow.</p>
${asked.length ? `<p>Asked for:</p><ul>${asked.map((s) => `<li>${scopeLabel(s)}</li>`).join('')}</ul>` : ''}
${view.error ? `<p class="alert" role="alert">${escapeHtml(view.error)}</p>` : ''}
<p class="muted">Sign in from the application with a key that holds them, or ask whoever manages your keys.</p>
<form method="post" action="${escapeHtml(view.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">
<div class="actions"><button class="primary" type="submit" name="decision" value="deny">Return to ${escapeHtml(client.name)}</button></div>
</form>
<p class="muted">The application is told that access was denied; it returns to <code>${escapeHtml(client.redirectHost)}</code>.</p>`,
  );
}

/** Sign-in attempts over a budget (429): nothing was checked; when to try again, in words. */
export function tooManyAttemptsPage(serviceName: string, retryAfterSeconds: number): string {
  const minutes = Math.ceil(retryAfterSeconds / 60);
  const when = retryAfterSeconds < 90 ? `${retryAfterSeconds} seconds` : `${minutes} minutes`;
  return layout(
    `Too many attempts - ${serviceName}`,
    `<h1>Too many sign-in attempts</h1>
<p class="alert" role="alert">There have been too many sign-in attempts for this key, application or network. Nothing was checked. Try again in ${when}.</p>
<p class="muted">You can go back and sign in then, or start again from your application.</p>`,
  );
}

/**
 * The sign-in service cannot reach its store right now (503): nothing expired and nothing was decided;
 * the same page or form works again in a moment, so the user is told to retry, not to start over.
 */
export function unavailablePage(retryAfterSeconds: number): string {
  const when = retryAfterSeconds <= 1 ? 'a moment' : `${retryAfterSeconds} seconds`;
  return layout(
    'Sign-in briefly unavailable',
    `<h1>Sign-in is briefly unavailable</h1>
<p class="alert" role="alert">The sign-in service cannot reach its store right now. Nothing has expired: wait ${when}, then reload this page (your browser may ask to send the form again).</p>
<p class="muted">If this lasts, tell the gateway's operator.</p>`,
  );
}

export function errorPage(title: string, message: string): string {
  return layout(
    title,
    `<h1>${escapeHtml(title)}</h1>\n<p class="alert" role="alert">${escapeHtml(message)}</p>\n<p class="muted">You can close this window and start again from your application.</p>`,
  );
}
