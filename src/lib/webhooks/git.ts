/**
 * The messages of the git-hosting integrations (GitHub, GitLab), in the reference's wording
 * (zerver/lib/webhooks/git.py): pushes with their commits, branches and tags, issues and pull
 * (merge) requests, comments, releases.
 */

export const COMMITS_LIMIT = 20;

export type CommitData = { name: string; sha: string; url: string; message: string };

export const branchTopic = (repo: string, branch: string): string => `${repo} / ${branch}`;

export const issueTopic = (repo: string, type: string, id: number, title: string): string =>
  `${repo} / ${type} #${id} ${title}`;

const quote = (message: string) => `\n~~~ quote\n${message}\n~~~`;

function committers(commits: readonly CommitData[]): [string, number][] {
  const counts = new Map<string, number>();
  for (const c of commits) counts.set(c.name, (counts.get(c.name) ?? 0) + 1);
  const items = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  if (items.length <= 3) return items;
  const others = items.slice(3).reduce((n, [, c]) => n + c, 0);
  return [...items.slice(0, 3), ['others', others]];
}

function commitsContent(commits: readonly CommitData[]): string {
  let out = '';
  for (const c of commits.slice(0, COMMITS_LIMIT)) {
    out += `* ${c.message.split('\n', 1)[0]} ([${c.sha.slice(0, 7)}](${c.url}))\n`;
  }
  if (commits.length > COMMITS_LIMIT)
    out += `[and ${commits.length - COMMITS_LIMIT} more commit(s)]`;
  return out.trimEnd();
}

export function pushMessage(
  userName: string,
  compareUrl: string | null,
  branch: string,
  commits: readonly CommitData[],
  deleted = false,
): string {
  if (commits.length === 0 && deleted)
    return `${userName} [deleted](${compareUrl ?? ''}) the branch ${branch}.`;
  if (commits.length === 0)
    return `${userName} [pushed](${compareUrl ?? ''}) the branch ${branch}.`;
  const n = `${commits.length} commit${commits.length > 1 ? 's' : ''}`;
  const pushed = compareUrl ? `[pushed](${compareUrl}) ${n}` : `pushed ${n}`;
  const base = `${userName} ${pushed} to branch ${branch}.`;
  const who = committers(commits);
  if (who.length === 1 && who[0]![0] === userName)
    return `${base}\n\n${commitsContent(commits)}`.trimEnd();
  let details = `${who[0]![0]} (${who[0]![1]})`;
  for (const [name, count] of who.slice(1, -1)) details += `, ${name} (${count})`;
  if (who.length > 1) details += ` and ${who.at(-1)![0]} (${who.at(-1)![1]})`;
  return `${base} Commits by ${details}.\n\n${commitsContent(commits)}`.trimEnd();
}

export function forcePushMessage(userName: string, url: string, branch: string, head: string) {
  return `${userName} [force pushed](${url}) to branch ${branch}. Head is now ${head.slice(0, 7)}.`;
}

export function tagMessage(userName: string, tag: string, url: string | null, action: string) {
  const part = url ? `[${tag}](${url})` : tag;
  const msg = `${userName} ${action} tag ${part}`;
  return /[.!?,;:]$/.test(tag) ? msg : `${msg}.`;
}

/** An issue or pull/merge request event (the reference's get_pull_request_event_message). */
export function issueMessage(args: {
  userName: string;
  action: string;
  url: string;
  type: string;
  number?: number;
  title?: string | null;
  message?: string | null;
  assignees?: readonly string[];
  targetBranch?: string | null;
  baseBranch?: string | null;
}): string {
  const id = args.number === undefined ? '' : ` #${args.number}`;
  const title = args.title ?? null;
  let main =
    title !== null
      ? `${args.userName} ${args.action} [${args.type}${id} ${title}](${args.url})`
      : `${args.userName} ${args.action} [${args.type}${id}](${args.url})`;
  const assignees = args.assignees ?? [];
  if (assignees.length > 0) {
    const who =
      assignees.length === 1
        ? assignees[0]!
        : `${assignees.slice(0, -1).join(', ')} and ${assignees.at(-1)!}`;
    main += ` (assigned to ${who})`;
  }
  const branches = Boolean(args.targetBranch && args.baseBranch);
  if (branches) main += ` from \`${args.targetBranch!}\` to \`${args.baseBranch!}\``;
  const punctuation = args.message ? ':' : '.';
  if (assignees.length > 0 || branches || title === null) main += punctuation;
  else if (!/[!-/:-@[-`{-~]$/.test(title)) main += punctuation;
  if (args.message) main += '\n' + quote(args.message);
  return main.trimEnd();
}

export function commentMessage(
  userName: string,
  commentUrl: string,
  target: string,
  targetUrl: string,
  body: string,
): string {
  return `${userName} [commented](${commentUrl}) on [${target}](${targetUrl})\n${quote(body)}`;
}

export function releaseMessage(
  userName: string,
  action: string,
  tag: string,
  name: string,
  url: string,
): string {
  return `${userName} ${action} release [${name}](${url}) for tag ${tag}.`;
}
