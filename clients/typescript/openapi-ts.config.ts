// Config for @hey-api/openapi-ts. `cargo xtask clients` runs it in a copy of this folder under
// target/clients/typescript and passes the input (the repository's openapi.json) and the output
// folder (`generated`) on the command line.
import { defineConfig } from '@hey-api/openapi-ts';

export default defineConfig({
  input: '../../../openapi.json',
  output: 'generated',
  plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'],
});
