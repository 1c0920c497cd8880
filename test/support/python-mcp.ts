// The Python MCP SDK (`mcp` on PyPI) for the gateway's client tests, in a cached venv (scripts/python-venv.ts).
import { pinnedPython } from '../../scripts/python-venv';

/** The Python SDK release the tests play. */
export const PYTHON_MCP_VERSION = '2.3.0';

/** The venv's python with `mcp==PYTHON_MCP_VERSION` installed, installing it on first use. */
export function pythonWithMcp(): string {
  return pinnedPython({ distribution: 'mcp', version: PYTHON_MCP_VERSION, module: 'mcp', cacheName: 'python-mcp' });
}
