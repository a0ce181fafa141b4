// Writes project.json + jest.config.cjs for a lib or app if missing: `node tools/scaffold/project-files.mjs libs/query`.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

for (const dir of process.argv.slice(2)) {
  const [kind, name] = dir.split('/');
  mkdirSync(path.join(dir, 'src'), { recursive: true });
  const rel = path.relative(dir, '.') || '.';
  if (!existsSync(path.join(dir, 'jest.config.cjs'))) {
    writeFileSync(
      path.join(dir, 'jest.config.cjs'),
      `module.exports = {\n  ...require('${rel}/jest.preset.cjs'),\n  displayName: '${name}',\n  rootDir: __dirname,\n};\n`,
    );
  }
  if (!existsSync(path.join(dir, 'project.json'))) {
    const project = {
      name,
      $schema: `${rel}/node_modules/nx/schemas/project-schema.json`,
      sourceRoot: `${dir}/src`,
      projectType: kind === 'apps' ? 'application' : 'library',
      tags: [kind === 'apps' ? 'type:app' : 'type:lib'],
      targets: {
        test: {
          executor: 'nx:run-commands',
          options: { command: `node tools/test/jest.mjs ${dir}`, cwd: '{workspaceRoot}' },
        },
        lint: {
          executor: 'nx:run-commands',
          options: { command: `eslint ${dir}`, cwd: '{workspaceRoot}' },
        },
      },
    };
    if (kind === 'apps') {
      project.tags.push(`module:${name}`);
      const cmd = (command) => ({ executor: 'nx:run-commands', options: { command, cwd: '{workspaceRoot}' } });
      project.targets.build = { ...cmd(`node tools/build/build-app.mjs ${name}`), outputs: [`{workspaceRoot}/dist/apps/${name}`], cache: true };
      project.targets.serve = { ...cmd(`node dist/apps/${name}/main.js`), dependsOn: ['build'] };
      project.targets.migrate = cmd(`node tools/prisma/migrate.mjs --app ${name}`);
      project.targets['prisma-generate'] = cmd(`node tools/prisma/generate-all.mjs ${name}`);
    }
    writeFileSync(path.join(dir, 'project.json'), JSON.stringify(project, null, 2) + '\n');
  }
}
