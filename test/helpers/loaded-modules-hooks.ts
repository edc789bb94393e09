/** The module hook of loaded-modules.ts: the URL of each module loaded, appended to the file. */
import fs from 'node:fs';

type Next = (url: string, context: unknown) => Promise<unknown>;

export async function load(url: string, context: unknown, next: Next): Promise<unknown> {
  fs.appendFileSync(process.env.LOADED_MODULES_FILE!, url + '\n');
  return next(url, context);
}
