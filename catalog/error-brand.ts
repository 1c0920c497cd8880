// Workflow-safe: the brand that makes `is()` work on toolplane's errors across the workflow sandbox
// and across two copies of the package, where `instanceof` fails. Written here once; each error
// class that callers test for stamps its own brand.

/** The registered symbol of a brand: `toolplane.<name>`, the same in every realm that asks for it. */
export function errorBrand(name: string): symbol {
  return Symbol.for(`toolplane.${name}`);
}

/** Whether `err` carries `brand`. */
export function hasBrand(err: unknown, brand: symbol): boolean {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[brand] === true;
}
