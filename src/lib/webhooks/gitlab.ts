/**
 * GitLab (/api/v1/external/gitlab): the event named by the `X-Gitlab-Event` header. Reference:
 * zerver/webhooks/gitlab/view.py.
 */
import { z } from 'zod';
import {
  MissingHttpEventHeaderError,
  parsePayload,
  UnsupportedWebhookEventTypeError,
  type Integration,
  type WebhookMessage,
} from './common.js';
import {
  branchTopic,
  commentMessage,
  issueMessage,
  issueTopic,
  pushMessage,
  tagMessage,
} from './git.js';

const NAME = 'GitLab';
const project = z.object({ name: z.string(), web_url: z.string() });
const EMPTY_SHA = '0000000000000000000000000000000000000000';

const ACTIONS: Record<string, string> = {
  open: 'created',
  update: 'updated',
  close: 'closed',
  reopen: 'reopened',
  merge: 'merged',
  approved: 'approved',
  unapproved: 'unapproved',
};

function push(payload: unknown, tags: boolean): WebhookMessage[] {
  const p = parsePayload(
    NAME,
    z.object({
      ref: z.string(),
      before: z.string(),
      after: z.string(),
      user_name: z.string(),
      project,
      commits: z.array(
        z.object({
          id: z.string(),
          url: z.string(),
          message: z.string(),
          author: z.object({ name: z.string() }),
        }),
      ),
    }),
    payload,
  );
  if (tags) {
    const tag = p.ref.replace(/^refs\/tags\//, '');
    const removed = p.after === EMPTY_SHA;
    return [
      {
        topic: p.project.name,
        content: tagMessage(
          p.user_name,
          tag,
          removed ? null : `${p.project.web_url}/-/tags/${tag}`,
          removed ? 'removed' : 'pushed',
        ),
      },
    ];
  }
  const branch = p.ref.replace(/^refs\/heads\//, '');
  const deleted = p.after === EMPTY_SHA;
  const compare = deleted
    ? `${p.project.web_url}/-/commits/${branch}`
    : `${p.project.web_url}/-/compare/${p.before.slice(0, 7)}...${p.after.slice(0, 7)}`;
  const commits = p.commits.map((c) => ({
    name: c.author.name,
    sha: c.id,
    url: c.url,
    message: c.message,
  }));
  return [
    {
      topic: branchTopic(p.project.name, branch),
      content: pushMessage(p.user_name, compare, branch, commits, deleted),
    },
  ];
}

const person = z.object({ name: z.string(), username: z.string().optional() });

function issueEvent(payload: unknown, kind: 'issue' | 'MR'): WebhookMessage[] {
  const p = parsePayload(
    NAME,
    z.object({
      user: person,
      project,
      object_attributes: z.object({
        iid: z.number(),
        title: z.string(),
        url: z.string(),
        action: z.string().optional(),
        description: z.string().nullable().optional(),
        source_branch: z.string().optional(),
        target_branch: z.string().optional(),
      }),
      assignees: z.array(person).optional(),
    }),
    payload,
  );
  const o = p.object_attributes;
  const action = ACTIONS[o.action ?? ''];
  if (action === undefined)
    throw new UnsupportedWebhookEventTypeError(
      NAME,
      `${kind === 'MR' ? 'Merge Request Hook' : 'Issue Hook'}:${o.action ?? ''}`,
    );
  const created = o.action === 'open';
  return [
    {
      topic: issueTopic(p.project.name, kind, o.iid, o.title),
      content: issueMessage({
        userName: p.user.name,
        action,
        url: o.url,
        type: kind,
        number: o.iid,
        message: created ? (o.description ?? null) : null,
        assignees: created ? (p.assignees ?? []).map((a) => a.name) : [],
        targetBranch: created && kind === 'MR' ? (o.source_branch ?? null) : null,
        baseBranch: created && kind === 'MR' ? (o.target_branch ?? null) : null,
      }),
    },
  ];
}

function noteEvent(payload: unknown): WebhookMessage[] {
  const p = parsePayload(
    NAME,
    z.object({
      user: person,
      project,
      object_attributes: z.object({
        note: z.string(),
        url: z.string(),
        noteable_type: z.string(),
      }),
      issue: z.object({ iid: z.number(), title: z.string() }).optional(),
      merge_request: z.object({ iid: z.number(), title: z.string() }).optional(),
      commit: z.object({ id: z.string(), url: z.string() }).optional(),
    }),
    payload,
  );
  const o = p.object_attributes;
  const targetUrl = o.url.split('#')[0]!;
  if (o.noteable_type === 'Issue' && p.issue) {
    return [
      {
        topic: issueTopic(p.project.name, 'issue', p.issue.iid, p.issue.title),
        content: commentMessage(p.user.name, o.url, `issue #${p.issue.iid}`, targetUrl, o.note),
      },
    ];
  }
  if (o.noteable_type === 'MergeRequest' && p.merge_request) {
    const mr = p.merge_request;
    return [
      {
        topic: issueTopic(p.project.name, 'MR', mr.iid, mr.title),
        content: commentMessage(p.user.name, o.url, `MR #${mr.iid}`, targetUrl, o.note),
      },
    ];
  }
  if (o.noteable_type === 'Commit' && p.commit) {
    return [
      {
        topic: p.project.name,
        content: commentMessage(p.user.name, o.url, p.commit.id.slice(0, 7), p.commit.url, o.note),
      },
    ];
  }
  throw new UnsupportedWebhookEventTypeError(NAME, `Note Hook ${o.noteable_type}`);
}

function pipelineEvent(payload: unknown): WebhookMessage[] {
  const p = parsePayload(
    NAME,
    z.object({
      project,
      object_attributes: z.object({ id: z.number(), ref: z.string(), status: z.string() }),
      builds: z.array(z.object({ name: z.string(), status: z.string() })).optional(),
    }),
    payload,
  );
  const o = p.object_attributes;
  const url = `${p.project.web_url}/-/pipelines/${o.id}`;
  let content = `[Pipeline (${o.id})](${url}) changed status to ${o.status}.`;
  const builds = p.builds ?? [];
  if (builds.length > 0) {
    content = `[Pipeline (${o.id})](${url}) changed status to ${o.status} with build(s):`;
    for (const b of builds) content += `\n* ${b.name} - ${b.status}`;
  }
  return [{ topic: branchTopic(p.project.name, o.ref), content }];
}

export const gitlab: Integration = {
  name: 'gitlab',
  displayName: NAME,
  handle({ payload, headers }) {
    const event = headers['x-gitlab-event'];
    if (event === undefined) throw new MissingHttpEventHeaderError('X-Gitlab-Event');
    switch (event) {
      case 'Push Hook':
        return push(payload, false);
      case 'Tag Push Hook':
        return push(payload, true);
      case 'Issue Hook':
      case 'Confidential Issue Hook':
        return issueEvent(payload, 'issue');
      case 'Merge Request Hook':
        return issueEvent(payload, 'MR');
      case 'Note Hook':
      case 'Confidential Note Hook':
        return noteEvent(payload);
      case 'Pipeline Hook':
        return pipelineEvent(payload);
      default:
        throw new UnsupportedWebhookEventTypeError(NAME, event);
    }
  },
};
