import js from '@eslint/js';
import nx from '@nx/eslint-plugin';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '.tools/**', '.capstan/**', '.nx/**', 'tools/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    // Nest's dependency injection reads constructor parameter types at run time (decorator metadata).
    languageOptions: { parserOptions: { emitDecoratorMetadata: true, experimentalDecorators: true } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      'no-console': 'error',
      '@nx/enforce-module-boundaries': [
        'error',
        {
          allow: [],
          depConstraints: [
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:feature', 'type:runtime', 'type:util'] },
            { sourceTag: 'type:bundle', onlyDependOnLibsWithTags: ['type:app', 'type:feature', 'type:runtime', 'type:util'] },
            { sourceTag: 'type:feature', onlyDependOnLibsWithTags: ['type:feature', 'type:runtime', 'type:util'] },
            { sourceTag: 'type:runtime', onlyDependOnLibsWithTags: ['type:runtime', 'type:util'] },
            { sourceTag: 'type:util', onlyDependOnLibsWithTags: ['type:util'] },
          ],
        },
      ],
    },
  },
  {
    // The all-in-one process hosts the service apps' definitions (their `./service` exports): the one place an app is
    // imported. Nx refuses app imports outright, so exactly those five are allowed, and only here.
    files: ['apps/all-in-one/src/**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          allow: ['core', 'cluster-provider', 'machine-provider', 'bootstrap-provider', 'control-plane-provider'].map((app) => `@capstan/${app}/service`),
          depConstraints: [{ sourceTag: 'type:bundle', onlyDependOnLibsWithTags: ['type:app', 'type:feature', 'type:runtime', 'type:util'] }],
        },
      ],
    },
  },
  {
    // class-validator's entry point loads all of it (validator.js, libphonenumber-js: 4.5 MiB a service); the
    // decorators Capstan uses come one module each through libs/api/src/schema/class-validator.ts. Tests may use it.
    files: ['**/*.ts'],
    ignores: ['**/*.spec.ts', 'libs/api/src/schema/class-validator.ts', 'libs/api/src/schema/class-validator-modules.d.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'class-validator',
              allowTypeImports: true,
              message: "Import class-validator's decorators from @capstan/api (libs/api/src/schema/class-validator.ts).",
            },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    ignores: ['apps/dashboard/web/**'],
    languageOptions: { globals: globals.node },
    rules: { 'no-console': 'off' },
  },
  {
    // The dashboard's page runs in the browser.
    files: ['apps/dashboard/web/**/*.js'],
    languageOptions: { globals: globals.browser, sourceType: 'module' },
  },
);
