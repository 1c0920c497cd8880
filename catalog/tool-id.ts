// Workflow-safe: the parts of a tool identity (`tool://server/name` or `ext:<plugin>:<name>`).
export function serverOf(id: string): string {
  return id.startsWith('ext:') ? id.split(':')[1]! : id.slice('tool://'.length).split('/')[0]!;
}

export function nameOf(id: string): string {
  return id.startsWith('ext:') ? id.split(':').slice(2).join(':') : id.slice('tool://'.length).split('/')[1]!;
}
