import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');
const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter((f) => /\.(ts|js|mjs|md|sh|yml|json|lua|html|css)$/.test(f) && f !== 'package-lock.json')
  .filter((f) => existsSync(resolve(ROOT, f)));

// A reader has this repository and nothing else: no file may send them outside it.
describe('The repository documents itself', () => {
  it('no file points outside the repository or to an issue tracker its readers do not have', () => {
    const outside = /\.\.\/shared|\bthe issue\b|\bissue \d+\b/i;
    const offenders = tracked.filter(
      (f) =>
        f !== 'test/unit/self-contained.spec.ts' &&
        outside.test(readFileSync(resolve(ROOT, f), 'utf8')),
    );
    expect(offenders).toEqual([]);
  });

  it('every relative link in the documentation leads to a file of the repository', () => {
    const broken: string[] = [];
    for (const doc of tracked.filter((f) => f.endsWith('.md'))) {
      const text = readFileSync(resolve(ROOT, doc), 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(target)) continue; // http(s), mailto
        if (!existsSync(resolve(ROOT, dirname(doc), target))) broken.push(`${doc} → ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('the contract the README and the code refer to is in the repository', () => {
    expect(existsSync(resolve(ROOT, 'docs/API.md'))).toBe(true);
    expect(readFileSync(resolve(ROOT, 'README.md'), 'utf8')).toContain('](docs/API.md)');
  });
});
