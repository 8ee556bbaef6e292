import { execFileSync } from 'node:child_process';
import { measureOutage } from '../scripts/bench/outage.ts';
const [baseUrl, apiKey, dataDir] = process.argv.slice(2);
const ps = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
const pid = Number(ps.split('\n').map((l) => l.trim()).find((l) => l.includes(dataDir!) && /\bjava\b/.test(l))?.split(/\s+/, 1)[0]);
console.log('jvm', pid);
const r = await measureOutage({ baseUrl: baseUrl!, apiKey: apiKey!, pause: () => { process.kill(pid, 'SIGSTOP'); }, resume: () => { process.kill(pid, 'SIGCONT'); }, pauseMs: 10_000 });
console.log(JSON.stringify(r, null, 1));
