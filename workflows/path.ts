// Where the toolplane CLI worker's workflow module is; resolved, not imported, so callers load no workflow code.
export const WORKFLOWS_PATH = require.resolve('./index');
