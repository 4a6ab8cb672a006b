/**
 * The process environment, with `.env` loaded into it first when the file exists. The one place
 * besides the config loader that touches process.env.
 */
export function readEnvironment(envFile = '.env'): Readonly<Record<string, string | undefined>> {
  try {
    process.loadEnvFile(envFile);
  } catch {
    // No .env: the environment alone configures the server.
  }
  return process.env;
}
