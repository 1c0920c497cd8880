// A GGUF model on node-llama-cpp's prebuilt CPU binaries, answering Chat Completions requests one at
// a time. node-llama-cpp is a devDependency of this repository and is loaded only here.
import type {
  ChatHistoryItem,
  GbnfJsonSchema,
  Llama,
  LlamaContext,
  LlamaContextSequence,
  LlamaGrammar,
  LlamaModel,
} from 'node-llama-cpp' with { 'resolution-mode': 'import' };
import type * as LlamaCpp from 'node-llama-cpp' with { 'resolution-mode': 'import' };
import { ToolplaneError } from '../../catalog/errors';
import {
  formatToolCall,
  readReply,
  replySchema,
  toolInstructions,
  type ModelReply,
  type OfferedFunction,
} from './reply-format';

/** One message of a Chat Completions request, as much of it as this model reads. */
export interface ChatMessageIn {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  content?: string | null | { type: string; text?: string }[];
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

export interface ChatRequest {
  messages: ChatMessageIn[];
  tools: OfferedFunction[];
  temperature?: number;
  maxTokens?: number;
}

export interface ChatAnswer {
  reply: ModelReply;
  inputTokens: number;
  outputTokens: number;
  /** The answer ran into the token limit. */
  truncated: boolean;
}

export interface ChatModelOptions {
  /** Tokens the context holds; SmolLM2 was trained on 8192. */
  contextSize?: number;
  /**
   * CPU threads. One by default: llama.cpp's threads wait by spinning, and on a machine whose
   * cores are busy with other work two threads were measured hundreds of times slower than one.
   */
  threads?: number;
}

const DEFAULT_MAX_TOKENS = 256;

function text(content: ChatMessageIn['content']): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => p.text ?? '').join('');
  return '';
}

/** The request's conversation as node-llama-cpp's chat history, ending with the turn to generate. */
export function toHistory(messages: ChatMessageIn[], tools: OfferedFunction[]): ChatHistoryItem[] {
  const toolNames = new Map<string, string>();
  const system = messages
    .filter((m) => m.role === 'system' || m.role === 'developer')
    .map((m) => text(m.content))
    .concat(tools.length ? [toolInstructions(tools)] : [])
    .join('\n\n');
  const history: ChatHistoryItem[] = system ? [{ type: 'system', text: system }] : [];
  for (const m of messages) {
    switch (m.role) {
      case 'user':
        history.push({ type: 'user', text: text(m.content) });
        break;
      case 'assistant': {
        const parts = [
          text(m.content),
          ...(m.tool_calls ?? []).map((c) => formatToolCall(c.function.name, c.function.arguments)),
        ];
        for (const c of m.tool_calls ?? []) toolNames.set(c.id, c.function.name);
        history.push({ type: 'model', response: [parts.filter(Boolean).join('\n')] });
        break;
      }
      case 'tool':
        history.push({
          type: 'user',
          text: `Result of ${toolNames.get(m.tool_call_id ?? '') ?? 'the tool'}: ${text(m.content)}`,
        });
        break;
      default:
        break;
    }
  }
  history.push({ type: 'model', response: [] });
  return history;
}

export class LocalChatModel {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();

  private constructor(
    private readonly lib: typeof LlamaCpp,
    private readonly llama: Llama,
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    private readonly sequence: LlamaContextSequence,
  ) {}

  /** Loads the GGUF on the CPU with the prebuilt binaries; never builds llama.cpp from source. */
  static async load(modelPath: string, opts: ChatModelOptions = {}): Promise<LocalChatModel> {
    const lib = await import('node-llama-cpp');
    const llama = await lib
      .getLlama({ gpu: false, build: 'never', progressLogs: false, logLevel: lib.LlamaLogLevel.error })
      .catch((err: unknown) => {
        throw new ToolplaneError(
          'LocalModelUnavailable',
          [
            `no prebuilt node-llama-cpp binary loads on ${process.platform}-${process.arch}: ${err instanceof Error ? err.message : String(err)}`,
            `npm installs the one for this platform as an optional dependency of node-llama-cpp; if the lockfile lacks it,`,
            `run \`npm install\` (or \`npx node-llama-cpp source download\` to build llama.cpp from source).`,
          ].join('\n'),
        );
      });
    const model = await llama.loadModel({ modelPath });
    const context = await model.createContext({ contextSize: opts.contextSize ?? 4096, threads: opts.threads ?? 1 });
    return new LocalChatModel(lib, llama, model, context, context.getSequence());
  }

  private grammarFor(tools: OfferedFunction[]): Promise<LlamaGrammar> {
    const schema = replySchema(tools);
    const key = JSON.stringify(schema);
    let grammar = this.grammars.get(key);
    if (!grammar) {
      grammar = this.llama.createGrammarForJsonSchema<GbnfJsonSchema>(schema);
      this.grammars.set(key, grammar);
    }
    return grammar;
  }

  /** Answers one request; requests wait their turn, since the model has one sequence. */
  answer(req: ChatRequest): Promise<ChatAnswer> {
    const run = this.queue.then(() => this.generate(req));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async generate(req: ChatRequest): Promise<ChatAnswer> {
    const chat = new this.lib.LlamaChat({ contextSequence: this.sequence, autoDisposeSequence: false });
    const before = this.sequence.tokenMeter.getState();
    try {
      const result = await chat.generateResponse(toHistory(req.messages, req.tools), {
        ...(req.tools.length ? { grammar: await this.grammarFor(req.tools) } : {}),
        maxTokens: req.maxTokens ?? DEFAULT_MAX_TOKENS,
        temperature: req.temperature ?? 0,
        // A model this small repeats itself at temperature 0; a mild penalty keeps answers short.
        repeatPenalty: { penalty: 1.2 },
      });
      const outputTokens = this.sequence.tokenMeter.getState().usedOutputTokens - before.usedOutputTokens;
      return {
        reply: req.tools.length ? readReply(result.response, req.tools) : { answer: result.response },
        // The prompt's length, whether evaluated now or reused from the previous request's cache.
        inputTokens: Math.max(0, this.sequence.contextTokens.length - outputTokens),
        outputTokens,
        truncated: result.metadata.stopReason === 'maxTokens',
      };
    } finally {
      chat.dispose({ disposeSequence: false });
    }
  }

  async close(): Promise<void> {
    await this.context.dispose();
    await this.model.dispose();
    await this.llama.dispose();
  }
}
