// Toolplane's workflows bundled ahead of time (the package build, the tests, the fault campaigns), always with the
// workflow interceptor modules the plugin puts in every bundle it makes: a worker handed this bundle emits the
// same workflow spans as one that bundles for itself.
import fs from 'node:fs';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { Configuration } from 'webpack';
import { WORKFLOW_INTERCEPTOR_MODULES, WORKFLOW_PRELOAD_MODULES, WORKFLOWS_PATH } from '../runtime/workflow-modules';

const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} };

/**
 * Bundles the workflows at `workflowsPath` into `file`; returns the bundle's size in bytes. With
 * `sources: false` (the test suites' bundles) the inline source map keeps its mappings but not the
 * sources' text: a map of several MB in a file on disk overflows the stack of the source-map
 * lookup jest runs on every stack trace that passes through the bundle (a known limit of
 * source-map-support's regular expression).
 */
export async function writeWorkflowBundle(
  file: string,
  workflowsPath: string = WORKFLOWS_PATH,
  { sources = true }: { sources?: boolean } = {},
): Promise<number> {
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
    preloadModules: WORKFLOW_PRELOAD_MODULES,
    logger: quiet,
    ...(sources
      ? {}
      : { webpackConfigHook: (config: Configuration) => ({ ...config, devtool: 'inline-nosources-source-map' }) }),
  });
  fs.writeFileSync(file, code);
  return code.length;
}

interface LoaderRule {
  use?: { loader?: string; options?: { jsc?: { target?: string } } };
}

/**
 * Bundler options that compile TypeScript sources to the language level the package ships (tsconfig's
 * ES2022, as `npm run build` compiles `lib/`), not the SDK's ES2017 default, which turns every object
 * spread into a helper call. The bench measures toolplane from its sources as a user runs it installed.
 */
export const AS_SHIPPED = {
  preloadModules: WORKFLOW_PRELOAD_MODULES,
  webpackConfigHook(config: Configuration): Configuration {
    for (const rule of (config.module?.rules ?? []) as LoaderRule[]) {
      const jsc = rule.use?.loader?.includes('swc-loader') ? rule.use.options?.jsc : undefined;
      if (jsc) jsc.target = 'es2022';
    }
    return config;
  },
};
