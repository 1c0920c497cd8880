// Workflow-safe: the manifest's shared field shapes (durations, pointers, tool and source ids, server names,
// sensitivity), each with the title and description its JSON Schema carries.
import { z } from 'zod';
import { durationText } from './duration';
import { SENSITIVITY_LEVELS } from './sensitivity';
import { toolIdText } from './tool-id';

export const duration = z
  .union([z.number().int().nonnegative(), durationText('a duration such as "250ms", "30s", "5m", "1h"')])
  .meta({
    title: 'duration',
    description: 'A duration: whole milliseconds, or a number with a unit ms, s, m, h or d.',
    examples: ['30s'],
  });

export const jsonPointer = z
  .string()
  .regex(/^(\/([^~/]|~[01])*)+$/, 'a JSON pointer such as "/recipient"')
  .meta({ title: 'JSON pointer', description: "A JSON pointer into the call's arguments.", examples: ['/recipient'] });
export const toolId = toolIdText('a tool identity "tool://server/name" or "ext:<plugin>:<name>"').meta({
  title: 'tool identity',
  description: 'A tool identity: "tool://<server>/<name>", or "ext:<plugin>:<name>" for an extension tool.',
  examples: ['tool://crm/lookup_customer'],
});
export const sourceId = z
  .string()
  .regex(
    /^(user:\/\/[a-z]+|tool:\/\/[^/]+\/[^/]+|ext:[^:]+:.+)$/,
    'a source "user://prompt", "tool://server/name" or "ext:<plugin>:<name>"',
  )
  .meta({
    title: 'source',
    description: 'A source of values: "user://prompt", or the identity of the tool that produced them.',
    examples: ['tool://crm/lookup_customer'],
  });

export const serverName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_.-]*$/, 'a lower-case server name')
  .meta({
    title: 'server name',
    description: "A server name: lower case, the <server> of its tools' identities.",
    examples: ['crm'],
  });
export const sensitivity = z.enum(SENSITIVITY_LEVELS).meta({
  title: 'sensitivity',
  description: 'A sensitivity level, lowest first: public, internal, confidential, secret.',
});
