// What `toolplane manifest init` writes: a commented starter manifest that passes `manifest check`.
import fs from 'node:fs';
import path from 'node:path';

/**
 * The installed package's manifest.schema.json: the package root is above cli/ in the source, two
 * above in lib/cli/; undefined if neither holds it.
 */
export function packagedSchemaFile(): string | undefined {
  for (const dir of [path.dirname(__dirname), path.dirname(path.dirname(__dirname))]) {
    const file = path.join(dir, 'manifest.schema.json');
    if (fs.existsSync(file)) return file;
  }
  return undefined;
}

/** The modeline's path from the manifest's directory to the schema; yaml-language-server resolves it from there. */
export function schemaReference(manifestFile: string, schemaFile = packagedSchemaFile()): string {
  if (!schemaFile) return './node_modules/toolplane/manifest.schema.json';
  const rel = path
    .relative(path.dirname(path.resolve(manifestFile)), schemaFile)
    .split(path.sep)
    .join('/');
  return rel.startsWith('.') ? rel : `./${rel}`;
}

/** The starter manifest, with the modeline that gives editors the schema. */
export function starterManifest(schemaRef: string): string {
  return `# yaml-language-server: $schema=${schemaRef}
# A toolplane manifest: every tool this worker may reach, and who may have what. An unknown key is an
# error. Check it with \`npx toolplane manifest check <file>\`. Every field, its default and an example:
# node_modules/toolplane/docs/manifest.md (the same descriptions show in an editor that reads the schema).

version: 1 # required: the manifest format, always 1
name: my-agent # optional: a name for this deployment

# servers (required): where tools run, by server name, the <server> in tool://<server>/<name>.
# kind: in_process (TypeScript tools in the worker), mcp_stdio, mcp_http or extension.
servers:
  notes: { kind: in_process } # no module: the tools are the ones given to ToolplanePlugin (or --tools)

# tools (required): every tool a run may reach; a tool not declared here is unreachable.
tools:
  - id: tool://notes/save
    description: Save a note.
    input_schema: # the JSON Schema of the arguments: an object
      type: object
      properties:
        text: { type: string, description: The note. }
      required: [text]
      additionalProperties: false
    safety: idempotent # read_only | idempotent | mutating
    honours_idempotency_key: true # default false: the tool deduplicates by the key toolplane hands it
    recovery: retry # when the outcome is unknown: retry | reconcile | escalate | fail
    # The defaults of the rest, for instance:
    # retry: { initial_interval: 1s, backoff_coefficient: 2, maximum_interval: 30s, maximum_attempts: 5 }
    # timeouts: { start_to_close: 30s }
    # sensitivity: { max: internal, output: internal }
    # protected_fields: []     # field rules, such as { pointer: /recipient, from_sources: [tool://crm/lookup] }
    # approval: none           # on_violation: a gate violation asks a person instead of refusing

# principals (optional; without it any principal may be granted any declared tool and holds no
# capability): who may be granted what, by verified subject, group:<name>, or "*" for every other.
principals:
  "user:me": { tools: [tool://notes/save] } # capabilities: [] and models: "*" by default

# models (optional; default: the scripted model only): the model endpoints this worker serves.
# models:
#   fast: { provider: openai, api_key_env: OPENAI_API_KEY, models: [gpt-5-mini] }

# approvers (optional; default: nobody): who may decide calls that wait for a person (needs a worker identity).
# approvers:
#   - { tools: "*", groups: [support-leads] }

# limits (optional; default: uncapped): caps on every run.
# limits: { max_turns: 20, max_tool_calls: 50, deadline: 10m }
`;
}
