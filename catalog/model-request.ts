// Workflow-safe: what a run may say about its model, written once as the shape its input is checked
// with; the type `ModelRequest` is derived from it.
import { z } from 'zod';
import { ScriptTurnShape } from './script';

/** A type derived from a `.loose()` shape, without the index signature the looseness adds. */
export type Known<T> = { [K in keyof T as string extends K ? never : K]: T[K] };

/**
 * The model part of a run's input. Loose, so fields of runs already in history pass; a run from before
 * endpoints named a `provider` instead, which still replays (the worker refuses it by name).
 */
export function modelRequestShape() {
  return z
    .object({
      /** A model endpoint the worker declares, by name. */
      endpoint: z.string().min(1, 'must not be empty').optional(),
      /** @deprecated Runs started before the worker decided named a provider; they still replay. */
      provider: z.string().optional(),
      /** One of the endpoint's declared models; default its first. */
      model: z.string().optional(),
      temperature: z.number().optional(),
      /** For a `scripted` endpoint: the turns to play. */
      script: z.array(ScriptTurnShape).optional(),
      /** A display name for spans and the journal. */
      name: z.string().optional(),
    })
    .loose()
    .refine((m) => m.endpoint !== undefined || m.provider !== undefined, {
      message: 'must name a model endpoint the worker declares: { "endpoint": "<name>" }',
      path: ['endpoint'],
    });
}

/** A model request as a run's input may hold it, a legacy `provider` one included. */
export type RecordedModelRequest = Known<z.input<ReturnType<typeof modelRequestShape>>>;

/**
 * What a run may say about its model: the name of a worker-declared endpoint, and a model it serves.
 * The shape above with its legacy `provider` left out: a client names an endpoint.
 */
export type ModelRequest = Omit<RecordedModelRequest, 'endpoint' | 'provider'> & {
  /** A model endpoint the worker declares, by name. */
  endpoint: string;
};
