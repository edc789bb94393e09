/**
 * GitHub (/api/v1/external/github): the event named by the `X-GitHub-Event` header. Reference:
 * zerver/webhooks/github/view.py. Topics name the repository, with the branch for pushes and
 * the issue or pull request for those events.
 */
import { z } from 'zod';
import {
  MissingHttpEventHeaderError,
  parsePayload,
  setupMessage,
  UnsupportedWebhookEventTypeError,
  type Integration,
  type WebhookMessage,
} from './common.js';
import {
  branchTopic,
  commentMessage,
  forcePushMessage,
  issueMessage,
  issueTopic,
  pushMessage,
  releaseMessage,
  tagMessage,
} from './git.js';

const NAME = 'GitHub';
const user = z.object({ login: z.string(), html_url: z.string().optional() });
const repo = z.object({ name: z.string(), full_name: z.string(), html_url: z.string() });
const base = z.object({ sender: user, repository: repo });

const push = base.extend({
  ref: z.string(),
  after: z.string(),
  compare: z.string(),
  created: z.boolean(),
  deleted: z.boolean(),
  forced: z.boolean(),
  commits: z.array(
    z.object({
      id: z.string(),
      url: z.string(),
      message: z.string(),
      author: z.object({ name: z.string(), username: z.string().optional() }),
    }),
  ),
});

const issue = z.object({
  number: z.number(),
  title: z.string(),
  html_url: z.string(),
  body: z.string().nullable().optional(),
  assignees: z.array(user).optional(),
  pull_request: z.unknown().optional(),
});

const pull = z.object({
  number: z.number(),
  title: z.string(),
  html_url: z.string(),
  body: z.string().nullable().optional(),
  merged: z.boolean().optional(),
  head: z.object({ ref: z.string() }),
  base: z.object({ ref: z.string() }),
  assignees: z.array(user).optional(),
});

function pushEvent(payload: unknown): WebhookMessage[] {
  const p = parsePayload(NAME, push, payload);
  const repoName = p.repository.name;
  if (p.ref.startsWith('refs/tags/')) {
    const tag = p.ref.slice('refs/tags/'.length);
    const url = `${p.repository.html_url}/tree/${tag}`;
    return [
      {
        topic: repoName,
        content: tagMessage(
          p.sender.login,
          tag,
          p.deleted ? null : url,
          p.deleted ? 'deleted' : 'pushed',
        ),
      },
    ];
  }
  const branch = p.ref.replace(/^refs\/heads\//, '');
  const topic = branchTopic(repoName, branch);
  if (p.forced && !p.created && !p.deleted)
    return [{ topic, content: forcePushMessage(p.sender.login, p.compare, branch, p.after) }];
  const commits = p.commits.map((c) => ({
    name: c.author.username ?? c.author.name,
    sha: c.id,
    url: c.url,
    message: c.message,
  }));
  return [{ topic, content: pushMessage(p.sender.login, p.compare, branch, commits, p.deleted) }];
}

function issuesEvent(payload: unknown): WebhookMessage[] {
  const p = parsePayload(NAME, base.extend({ action: z.string(), issue }), payload);
  const i = p.issue;
  return [
    {
      topic: issueTopic(p.repository.name, 'issue', i.number, i.title),
      content: issueMessage({
        userName: p.sender.login,
        action: p.action,
        url: i.html_url,
        type: 'issue',
        number: i.number,
        message: p.action === 'opened' ? (i.body ?? null) : null,
        assignees: p.action === 'opened' ? (i.assignees ?? []).map((a) => a.login) : [],
      }),
    },
  ];
}

function issueCommentEvent(payload: unknown): WebhookMessage[] {
  const p = parsePayload(
    NAME,
    base.extend({
      action: z.string(),
      issue,
      comment: z.object({ html_url: z.string(), body: z.string() }),
    }),
    payload,
  );
  const i = p.issue;
  const type = i.pull_request === undefined ? 'issue' : 'PR';
  if (p.action !== 'created') {
    throw new UnsupportedWebhookEventTypeError(NAME, `issue_comment:${p.action}`);
  }
  return [
    {
      topic: issueTopic(p.repository.name, type, i.number, i.title),
      content: commentMessage(
        p.sender.login,
        p.comment.html_url,
        `${type} #${i.number}`,
        i.html_url,
        p.comment.body,
      ),
    },
  ];
}

const PR_ACTIONS: Record<string, string> = {
  opened: 'opened',
  reopened: 'reopened',
  closed: 'closed without merge',
  edited: 'edited',
  synchronize: 'updated',
  ready_for_review: 'marked ready for review',
  converted_to_draft: 'converted to draft',
};

function pullRequestEvent(payload: unknown): WebhookMessage[] {
  const p = parsePayload(NAME, base.extend({ action: z.string(), pull_request: pull }), payload);
  const pr = p.pull_request;
  let action = PR_ACTIONS[p.action];
  if (p.action === 'closed' && pr.merged) action = 'merged';
  if (action === undefined)
    throw new UnsupportedWebhookEventTypeError(NAME, `pull_request:${p.action}`);
  const opened = p.action === 'opened';
  return [
    {
      topic: issueTopic(p.repository.name, 'PR', pr.number, pr.title),
      content: issueMessage({
        userName: p.sender.login,
        action,
        url: pr.html_url,
        type: 'PR',
        number: pr.number,
        message: opened ? (pr.body ?? null) : null,
        assignees: opened ? (pr.assignees ?? []).map((a) => a.login) : [],
        targetBranch: opened ? pr.head.ref : null,
        baseBranch: opened ? pr.base.ref : null,
      }),
    },
  ];
}

function releaseEvent(payload: unknown): WebhookMessage[] {
  const p = parsePayload(
    NAME,
    base.extend({
      action: z.string(),
      release: z.object({
        tag_name: z.string(),
        name: z.string().nullable(),
        html_url: z.string(),
      }),
    }),
    payload,
  );
  const r = p.release;
  const name = r.name || r.tag_name;
  return [
    {
      topic: `${p.repository.name} / ${r.tag_name} ${name}`,
      content: releaseMessage(p.sender.login, p.action, r.tag_name, name, r.html_url),
    },
  ];
}

function refEvent(payload: unknown, created: boolean): WebhookMessage[] {
  const p = parsePayload(
    NAME,
    base.extend({ ref: z.string(), ref_type: z.enum(['branch', 'tag']) }),
    payload,
  );
  const url = `${p.repository.html_url}/tree/${p.ref}`;
  if (p.ref_type === 'tag')
    return [
      {
        topic: p.repository.name,
        content: tagMessage(
          p.sender.login,
          p.ref,
          created ? url : null,
          created ? 'created' : 'deleted',
        ),
      },
    ];
  return [
    {
      topic: branchTopic(p.repository.name, p.ref),
      content: created
        ? `${p.sender.login} created [${p.ref}](${url}) branch.`
        : `${p.sender.login} deleted branch ${p.ref}.`,
    },
  ];
}

function starEvent(payload: unknown, event: string): WebhookMessage[] {
  const p = parsePayload(NAME, base.extend({ action: z.string() }), payload);
  const verb = event === 'watch' ? 'starred' : p.action === 'deleted' ? 'unstarred' : 'starred';
  return [
    {
      topic: p.repository.name,
      content: `${p.sender.login} ${verb} the repository [${p.repository.full_name}](${p.repository.html_url}).`,
    },
  ];
}

function pingEvent(payload: unknown): WebhookMessage[] {
  const p = parsePayload(
    NAME,
    z.object({
      sender: user,
      repository: repo.optional(),
      organization: z.object({ login: z.string() }).optional(),
    }),
    payload,
  );
  const topic = p.repository?.name ?? p.organization?.login ?? 'GitHub';
  return [{ topic, content: setupMessage(NAME, p.sender.login) }];
}

export const github: Integration = {
  name: 'github',
  displayName: NAME,
  handle({ payload, headers }) {
    const event = headers['x-github-event'];
    if (event === undefined) throw new MissingHttpEventHeaderError('X-GitHub-Event');
    switch (event) {
      case 'ping':
        return pingEvent(payload);
      case 'push':
        return pushEvent(payload);
      case 'create':
        return refEvent(payload, true);
      case 'delete':
        return refEvent(payload, false);
      case 'issues':
        return issuesEvent(payload);
      case 'issue_comment':
        return issueCommentEvent(payload);
      case 'pull_request':
        return pullRequestEvent(payload);
      case 'release':
        return releaseEvent(payload);
      case 'star':
      case 'watch':
        return starEvent(payload, event);
      default:
        throw new UnsupportedWebhookEventTypeError(NAME, event);
    }
  },
};
