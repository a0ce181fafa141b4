import { z } from 'zod';
import { id, struct } from '@platform/http';
import { PLUGIN_ERROR_CODES } from '@platform/errors';
import { mergeErrors } from '@platform/http';
import { UPGRADE_MODES } from './plugins/registry';

/** Request pieces shared by the data-source and webhook operations. */
export const upgradeMode = z.enum(UPGRADE_MODES);
export const pluginVersion = z.string().trim().min(1).max(64);

export const pluginInfoRequest = {
  plugin_id: id,
  version: pluginVersion.optional(),
  options: struct.optional(),
  upgrade_mode: upgradeMode.optional(),
  // Computed by the plugin; accepted (upstream's clients send it back) and replaced.
  metadata: struct.optional(),
};

/**
 * Codes of an operation that calls a published plugin (init, verify): libs/plugin's own
 * (PLUGIN_ERROR_CODES: 503 ERROR_PLUGIN_UNAVAILABLE, 502 garbage...) and the common codes of
 * upstream's python-core that plugins end their calls with (the kit's `fail`). A plugin may send a
 * code of its own beyond these (it keeps its status); those cannot be listed.
 */
export const PLUGIN_CALL_ERRORS = mergeErrors(PLUGIN_ERROR_CODES, {
  400: ['ERROR_REQUIRED_PARAMETER', 'ERROR_INVALID_PARAMETER_TYPE', 'ERROR_AUTHENTICATE_FAILURE', 'ERROR_NOT_IMPLEMENTED'],
  502: ['ERROR_UNKNOWN'],
});
