// No Docker engine runs here, so the deployment files are checked for what refers to what.
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { loadManifest } from '../catalog/manifest-file';
import { SEARCH_ATTRIBUTES } from '../common/search-attributes';

const root = path.resolve(__dirname, '..');
type Service = {
  image?: string;
  build?: { context: string; dockerfile: string };
  depends_on?: string[] | Record<string, { condition: string }>;
  environment?: Record<string, string>;
  ports?: string[];
  command?: string[] | string;
  volumes?: string[];
};
const compose = parse(fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
};
const services = compose.services;

/** Ports each service listens on inside the network. */
const listens: Record<string, number> = { postgresql: 5432, temporal: 7233, 'temporal-ui': 8080 };

describe('docker-compose.yml', () => {
  it('has the Temporal server on PostgreSQL, the Web UI and toolplane workers', () => {
    expect(Object.keys(services)).toEqual(
      expect.arrayContaining(['postgresql', 'temporal', 'temporal-ui', 'toolplane-worker']),
    );
    expect(services.temporal!.environment!.DB).toMatch(/^postgres/);
    expect(services['toolplane-worker']!.build).toBeDefined();
  });

  it('refers only to services and volumes it defines', () => {
    for (const [name, svc] of Object.entries(services)) {
      const deps = Array.isArray(svc.depends_on) ? svc.depends_on : Object.keys(svc.depends_on ?? {});
      for (const d of deps)
        expect({ service: name, dependsOn: d, defined: d in services }).toEqual({
          service: name,
          dependsOn: d,
          defined: true,
        });
      for (const v of svc.volumes ?? []) {
        const source = v.split(':')[0]!;
        if (!source.startsWith('.') && !source.startsWith('/'))
          expect(Object.keys(compose.volumes ?? {})).toContain(source);
      }
    }
  });

  it('points every TEMPORAL_ADDRESS and database seed at a service listening on that port', () => {
    for (const [name, svc] of Object.entries(services)) {
      const address = svc.environment?.TEMPORAL_ADDRESS;
      if (!address) continue;
      const [host, port] = address.split(':');
      expect({ service: name, host, port: Number(port) }).toEqual({
        service: name,
        host: 'temporal',
        port: listens.temporal,
      });
    }
    const t = services.temporal!.environment!;
    expect(t.POSTGRES_SEEDS).toBe('postgresql');
    expect(Number(t.DB_PORT)).toBe(listens.postgresql);
    expect(t.POSTGRES_USER).toBe(services.postgresql!.environment!.POSTGRES_USER);
    expect(t.POSTGRES_PWD).toBe(services.postgresql!.environment!.POSTGRES_PASSWORD);
  });

  it('publishes the frontend and the Web UI on the ports the README gives', () => {
    expect(services.temporal!.ports).toContain('7233:7233');
    expect(services['temporal-ui']!.ports).toContain(`8080:${listens['temporal-ui']}`);
    expect(services['temporal-ui']!.environment!.TEMPORAL_CORS_ORIGINS).toBe('http://localhost:8080');
    expect(fs.readFileSync(path.join(root, 'README.md'), 'utf8')).toContain('http://localhost:8080');
  });

  it('builds the worker from a Dockerfile that copies what its command runs', () => {
    const w = services['toolplane-worker']!;
    const dockerfile = fs.readFileSync(path.join(root, w.build!.context, w.build!.dockerfile), 'utf8');
    const cmd = w.command as string[];
    const manifest = cmd[cmd.indexOf('--manifest') + 1]!;
    const tools = cmd[cmd.indexOf('--tools') + 1]!;
    expect(() => loadManifest(path.join(root, manifest))).not.toThrow();
    expect(fs.existsSync(path.join(root, tools, 'index.ts'))).toBe(true);
    for (const copied of [
      'catalog',
      'common',
      'workflows',
      'activities',
      'inspect',
      'examples',
      'worker.ts',
      'plugin.ts',
    ])
      expect(dockerfile).toContain(copied);
    // The image installs dev dependencies: tsx loads the example's TypeScript tools.
    expect(dockerfile).toMatch(/RUN npm ci\n/);
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
    expect(pkg.devDependencies.tsx).toBeDefined();
  });

  it('registers the search attributes the workflows write', () => {
    const setup = JSON.stringify(services['temporal-setup']!.command);
    for (const a of SEARCH_ATTRIBUTES) expect(setup).toContain(`--name ${a.name} --type ${a.cliType}`);
  });
});
