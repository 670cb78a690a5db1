/**
 * Summary of a V8 CPU profile (`node --cpu-prof`, a .cpuprofile JSON): the top frames by self time,
 * and self time by package (node_modules/<pkg>, our own top-level folder, a Node subsystem such as
 * node:undici or node:http, native functions by name), with idle time left out of the shares.
 * The profiler samples the thread's wall clock: time a syscall spends descheduled on a busy machine
 * (socket `writev` waking another process) shows up as that syscall's self time. CLI: `tsx bench/cpu-profile.ts <file.cpuprofile> [top]`.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface ProfileSummary {
  file: string;
  /** Sampled time, ms (idle excluded). */
  busyMs: number;
  idleMs: number;
  topFrames: { frame: string; selfMs: number; selfPct: number }[];
  byPackage: { pkg: string; selfMs: number; selfPct: number }[];
}

/** Where a frame's self time goes: a package, our folder, a Node subsystem, or a native function by name. */
function packageOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : `native ${functionName || '(anonymous)'}`;
  if (url.startsWith('node:')) {
    const path = url.slice('node:'.length).replace(/^internal\/(deps\/)?/, '');
    const area = path
      .split('/')[0]!
      .replace(/^_http_.*/, 'http')
      .replace(/^_stream_.*/, 'streams');
    return `node:${area}`;
  }
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const ours = /\/(gateway|search|config|upstream|bench)\//.exec(url);
  return ours ? `${ours[1]}/ (ours)` : url.replace(/^file:\/\//, '');
}

function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  if (!url) return functionName || '(anonymous)';
  const short = url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, '')
    .replace(/^.*\/(gateway|search|config|upstream|bench)\//, '$1/');
  return `${functionName || '(anonymous)'} ${short}:${lineNumber + 1}`;
}

/** Reads a .cpuprofile and summarises it (`top` frames). */
export function summariseProfile(file: string, top = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const frames = new Map<string, number>();
  const packages = new Map<string, number>();
  let idle = 0;
  let busy = 0;
  for (const [id, micros] of self) {
    const node = byId.get(id)!;
    if (node.callFrame.functionName === '(idle)') {
      idle += micros;
      continue;
    }
    busy += micros;
    const frame = frameName(node);
    frames.set(frame, (frames.get(frame) ?? 0) + micros);
    const pkg = packageOf(node.callFrame.url, node.callFrame.functionName);
    packages.set(pkg, (packages.get(pkg) ?? 0) + micros);
  }
  const rank = (map: Map<string, number>, n: number) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, micros]) => ({ name, selfMs: Math.round(micros / 100) / 10, selfPct: Math.round((1000 * micros) / (busy || 1)) / 10 }));
  return {
    file,
    busyMs: Math.round(busy / 1000),
    idleMs: Math.round(idle / 1000),
    topFrames: rank(frames, top).map(({ name, ...rest }) => ({ frame: name, ...rest })),
    byPackage: rank(packages, 16).map(({ name, ...rest }) => ({ pkg: name, ...rest })),
  };
}

/** Markdown for a summary: top frames then packages. */
export function profileMarkdown(summary: ProfileSummary): string {
  const lines = [`Profile ${summary.file}: ${summary.busyMs} ms busy, ${summary.idleMs} ms idle`, '', '| self % | self ms | frame |', '|---:|---:|---|'];
  for (const f of summary.topFrames) lines.push(`| ${f.selfPct} | ${f.selfMs} | \`${f.frame}\` |`);
  lines.push('', '| self % | package |', '|---:|---|');
  for (const p of summary.byPackage) lines.push(`| ${p.selfPct} | ${p.pkg} |`);
  return lines.join('\n');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: tsx bench/cpu-profile.ts <file.cpuprofile> [top]');
    process.exit(2);
  }
  console.log(profileMarkdown(summariseProfile(file, Number(process.argv[3] ?? 15))));
}
