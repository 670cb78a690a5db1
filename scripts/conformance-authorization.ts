/**
 * Runs the MCP conformance suite's authorization server scenarios (`conformance authorization`:
 * authorization-server-metadata-endpoint, authorization-code-grant) against the gateway's built-in
 * authorization server, playing the person at the browser (.ci/conformance.sh calls it):
 *
 *   node --import tsx scripts/conformance-authorization.ts --suite <conformance bin> --node-dir <Node 22 bin folder> \
 *     --issuer http://127.0.0.1:3000 --key cpz_demo_data --secret demo-secret-data --out .tmp/conformance/authorization
 *
 * It registers a public client (RFC 7591) whose redirect URI is the suite's callback server on a free
 * loopback port, starts the suite, and when the suite prints the authorization URL it walks the sign-in
 * and consent pages over HTTP (the key and secret given, every offered scope ticked) and follows the
 * redirect to the suite's callback, which then redeems the code itself (PKCE, RFC 8707 resource).
 * Exit status: 0 when every check of every scenario is SUCCESS, 1 otherwise (each check printed).
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort } from '../tests/helpers/free-port.ts';
import { csrfOf, Jar, registerClient, step } from '../tests/helpers/oauth-harness.ts';

const { values: args } = parseArgs({
  options: {
    suite: { type: 'string' },
    'node-dir': { type: 'string' },
    issuer: { type: 'string' },
    key: { type: 'string', default: 'cpz_demo_data' },
    secret: { type: 'string', default: 'demo-secret-data' },
    out: { type: 'string' },
  },
});
const { suite, issuer, out } = args as Required<typeof args>;
if (!suite || !issuer || !out) throw new Error('--suite, --issuer and --out are required');

/** The sign-in a person does in the browser, from the authorization URL to the client's redirect URI. */
async function signIn(authorizationUrl: string): Promise<void> {
  const jar = new Jar();
  let response = await step(jar, authorizationUrl);
  if (response.status !== 303) throw new Error(`authorize answered ${response.status}: ${await response.text()}`);
  const interaction = new URL(response.headers.get('location')!, issuer).href;
  const signInPage = await (await step(jar, interaction)).text();
  response = await step(jar, `${interaction}/login`, { csrf: csrfOf(signInPage), key: args.key!, secret: args.secret! });
  if (response.status !== 303) throw new Error(`sign-in answered ${response.status}`);
  const consent = await (await step(jar, interaction)).text();
  const offered = [...consent.matchAll(/name="scope" value="([^"]+)"/g)].map((m) => m[1]!);
  response = await step(jar, `${interaction}/consent`, { csrf: csrfOf(consent), decision: 'allow', scope: offered });
  let location = new URL(response.headers.get('location') ?? '', issuer).href;
  // oidc-provider resumes the authorization at its own origin, then redirects to the client.
  while (new URL(location).origin === new URL(issuer).origin) {
    response = await step(jar, location);
    if (![302, 303].includes(response.status)) throw new Error(`resume answered ${response.status}`);
    location = new URL(response.headers.get('location')!, issuer).href;
  }
  // The suite's callback server, which may still be starting (it listens after printing the URL).
  for (let tries = 0; ; tries++) {
    try {
      await (await fetch(location)).arrayBuffer();
      return;
    } catch (error) {
      if (tries >= 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

const port = await freePort();
const client = await registerClient(issuer, { client_name: 'MCP conformance suite', redirect_uris: [`http://127.0.0.1:${port}/callback`] });
const child = spawn(
  suite,
  ['authorization', '--url', issuer, '--client-id', client.client_id, '--resource', `${issuer}/mcp`, '--port', String(port), '-o', out],
  { env: { ...process.env, PATH: `${args['node-dir']}:${process.env.PATH}` }, stdio: ['ignore', 'pipe', 'inherit'] },
);
let signedIn: Promise<void> | undefined;
for await (const line of createInterface({ input: child.stdout! })) {
  console.log(line);
  const url = /^(https?:\/\/\S+\/authorize\?\S+)$/.exec(line.trim())?.[1];
  if (url && !signedIn)
    signedIn = signIn(url).catch((error: Error) => {
      // The suite would wait 5 minutes for a callback that never comes: stop it (its scenario is then missing, and the run fails).
      console.error(`sign-in failed: ${error.message}`);
      child.kill();
    });
}
await signedIn;
await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(undefined)));

// A scenario stopped before its end (the suite killed) left a folder without checks.json: it counts as missing.
const finished = existsSync(out) ? readdirSync(out).filter((dir) => existsSync(join(out, dir, 'checks.json'))) : [];
const checks = finished.flatMap((dir) =>
  (JSON.parse(readFileSync(join(out, dir, 'checks.json'), 'utf8')) as { id: string; status: string; errorMessage?: string }[]).map((c) => ({ dir, ...c })),
);
for (const c of checks) console.log(`${c.status.padEnd(8)} ${c.id}${c.errorMessage ? `: ${c.errorMessage}` : ''}`);
const scenarios = new Set(checks.map((c) => c.dir.replace(/-\d{4}-\d\d-\d\dT.*$/, '')));
const failed = checks.filter((c) => c.status !== 'SUCCESS');
console.log(`authorization server scenarios: ${scenarios.size}, checks: ${checks.length}, not SUCCESS: ${failed.length}`);
process.exit(failed.length === 0 && scenarios.size >= 2 ? 0 : 1);
