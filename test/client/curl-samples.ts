/**
 * Reads the document's `curl` samples (`x-codeSamples`) back into requests: the unit test checks
 * each against the document, the browser test (test/integration/docs.test.ts) sends each to the
 * local stack.
 */

/**
 * The words of a sample as a POSIX shell reads them: single quotes literal (`'\''` is a quote),
 * double quotes literal here too (they hold `$API_KEY`, left for the shell), backslash-newline a
 * space.
 */
export function shellWords(source: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < source.length; i++) {
    const c = source[i] as string;
    if (c === '\\' && source[i + 1] === '\n') {
      i++;
    } else if (c === "'" || c === '"') {
      const end = source.indexOf(c, i + 1);
      if (end === -1) throw new Error(`unterminated ${c} in ${source}`);
      word = (word ?? '') + source.slice(i + 1, end);
      i = end;
    } else if (c === '\\') {
      word = (word ?? '') + (source[++i] ?? '');
    } else if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** What a `curl` sample asks for. */
export interface CurlRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string;
}

export function parseCurl(source: string): CurlRequest {
  const [command, ...args] = shellWords(source);
  if (command !== 'curl') throw new Error(`not a curl command: ${source}`);
  let method: string | undefined;
  let url: URL | undefined;
  const headers: Record<string, string> = {};
  let body: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '-X') method = args[++i];
    else if (arg === '-I') method = 'HEAD';
    else if (arg === '-i') continue;
    else if (arg === '-H') {
      const [name = '', ...value] = (args[++i] ?? '').split(':');
      headers[name.trim().toLowerCase()] = value.join(':').trim();
    } else if (arg === '-d') body = args[++i];
    else if (!arg.startsWith('-') && url === undefined) url = new URL(arg);
    else throw new Error(`unexpected ${arg} in ${source}`);
  }
  if (!url) throw new Error(`no URL in ${source}`);
  return {
    method: method ?? (body === undefined ? 'GET' : 'POST'),
    url,
    headers,
    ...(body !== undefined ? { body } : {}),
  };
}
