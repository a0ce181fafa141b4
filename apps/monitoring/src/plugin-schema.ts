import { z } from 'zod';
import { id, struct } from '@platform/http';
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
