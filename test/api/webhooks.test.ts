/**
 * Incoming webhooks (POST /api/v1/external/{integration}) against the real server: each
 * integration with realistic payloads of our own (the shapes GitHub, GitLab, Grafana,
 * Alertmanager, Sentry and Slack-style tools send), checked against the message the reference
 * posts for them; the generic JSON webhook; authentication by `api_key` or HTTP Basic; `stream`
 * and `topic`; a direct message to the bot's owner without `stream`; unknown events, missing
 * event headers and malformed payloads refused with the reference's 4xx; a bot posting only
 * where it may. Reference tests: zerver/webhooks/<name>/tests.py.
 */
import t, { type Test } from 'tap';
import { assertError, assertSuccess, rawRequest, type ApiResponse } from '../helpers/api.js';
import { createChannel } from '../helpers/channels.js';
import { startServer, type TestServer } from '../helpers/server.js';

type Hook = { id: number; email: string; api_key: string };

async function setup(t: Test): Promise<{ ts: TestServer; hook: Hook }> {
  const ts = await startServer(t);
  await createChannel(ts.api, 'hamlet', 'devel');
  const res = await ts.api.post('hamlet', 'bots', {
    full_name: 'Hooks Bot',
    short_name: 'hooks',
    bot_type: 2,
  });
  const body = assertSuccess(t, res);
  return {
    ts,
    hook: {
      id: body.user_id as number,
      email: 'hooks-bot@testserver.local',
      api_key: body.api_key as string,
    },
  };
}

function post(
  ts: TestServer,
  path: string,
  payload: unknown,
  headers: Record<string, string> = {},
): Promise<ApiResponse> {
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
  return rawRequest(ts.url, {
    method: 'POST',
    path,
    headers: {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      ...headers,
    },
    body,
  });
}

const hookUrl = (hook: Hook, name: string, extra = '') =>
  `/api/v1/external/${name}?api_key=${hook.api_key}&stream=devel${extra}`;

/** The newest message of the channel "devel": topic, raw content, sender. */
async function lastMessage(t: Test, ts: TestServer) {
  const res = await ts.api.get('hamlet', 'messages', {
    anchor: 'newest',
    num_before: 1,
    num_after: 0,
    apply_markdown: false,
    narrow: [{ operator: 'channel', operand: 'devel' }],
  });
  const [m] = assertSuccess(t, res).messages as {
    subject: string;
    content: string;
    sender_id: number;
    client: string;
  }[];
  return m!;
}

async function expectMessage(
  t: Test,
  ts: TestServer,
  res: ApiResponse,
  topic: string,
  content: string,
): Promise<void> {
  assertSuccess(t, res);
  const m = await lastMessage(t, ts);
  t.equal(m.subject, topic, 'topic');
  t.equal(m.content, content, 'content');
}

t.test('generic JSON and Slack-compatible webhooks', async (t) => {
  const { ts, hook } = await setup(t);
  const payload = { event: 'deploy', ok: true, hosts: ['a', 'b'] };
  await expectMessage(
    t,
    ts,
    await post(ts, hookUrl(hook, 'json'), payload),
    'JSON',
    '```json\n{\n  "event": "deploy",\n  "ok": true,\n  "hosts": [\n    "a",\n    "b"\n  ]\n}\n```',
  );
  const m = await lastMessage(t, ts);
  t.equal(m.sender_id, hook.id, 'sent by the bot');
  t.equal(m.client, 'ZulipJSONWebhook');

  await expectMessage(
    t,
    ts,
    await post(ts, hookUrl(hook, 'slack_incoming', '&topic=ci'), {
      text: '*Build 42* _passed_ on <https://ci.example.com/b/42|main> ~slowly~ <!here>',
    }),
    'ci',
    '**Build 42** *passed* on [main](https://ci.example.com/b/42) ~~slowly~~ @**all**',
  );
  // Blocks and attachments, as a form whose `payload` field is the JSON.
  const slack = {
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: 'Release 2.1' } },
      { type: 'section', text: { type: 'mrkdwn', text: 'Shipped by *ops*' } },
      { type: 'divider' },
      {
        type: 'section',
        fields: [
          { type: 'mrkdwn', text: '*Env:* prod' },
          { type: 'mrkdwn', text: '*Region:* eu' },
        ],
      },
    ],
    attachments: [{ title: 'Changelog', title_link: 'https://example.com/cl', text: 'Fixes' }],
  };
  const form = `payload=${encodeURIComponent(JSON.stringify(slack))}`;
  const res = await rawRequest(ts.url, {
    method: 'POST',
    path: hookUrl(hook, 'slack_incoming', '&topic=release'),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'content-length': String(Buffer.byteLength(form)),
    },
    body: form,
  });
  await expectMessage(
    t,
    ts,
    res,
    'release',
    '## Release 2.1\n\nShipped by **ops**\n\n----\n\n**Env:** prod\n**Region:** eu\n\n## [Changelog](https://example.com/cl)\nFixes',
  );
});

const GH_REPO = {
  name: 'confab',
  full_name: 'octo/confab',
  html_url: 'https://github.com/octo/confab',
};
const GH_SENDER = { login: 'octocat', html_url: 'https://github.com/octocat' };

t.test('GitHub', async (t) => {
  const { ts, hook } = await setup(t);
  const gh = (event: string, payload: unknown) =>
    post(ts, hookUrl(hook, 'github'), payload, { 'x-github-event': event });

  await expectMessage(
    t,
    ts,
    await gh('ping', { zen: 'Keep it logically awesome.', sender: GH_SENDER, repository: GH_REPO }),
    'confab',
    'GitHub webhook has been successfully configured by octocat.',
  );

  const commit = (id: string, message: string, username = 'octocat') => ({
    id,
    url: `https://github.com/octo/confab/commit/${id}`,
    message,
    author: { name: username === 'octocat' ? 'Octo Cat' : 'Mona', username },
  });
  await expectMessage(
    t,
    ts,
    await gh('push', {
      ref: 'refs/heads/main',
      before: '1111111111111111111111111111111111111111',
      after: '2222222222222222222222222222222222222222',
      compare: 'https://github.com/octo/confab/compare/1111111...2222222',
      created: false,
      deleted: false,
      forced: false,
      commits: [
        commit('abcdef0123456789abcdef0123456789abcdef01', 'Fix the outbox\n\nLonger text.'),
        commit('0123456789abcdef0123456789abcdef01234567', 'Add bots'),
      ],
      sender: GH_SENDER,
      repository: GH_REPO,
    }),
    'confab / main',
    'octocat [pushed](https://github.com/octo/confab/compare/1111111...2222222) 2 commits to branch main.\n\n' +
      '* Fix the outbox ([abcdef0](https://github.com/octo/confab/commit/abcdef0123456789abcdef0123456789abcdef01))\n' +
      '* Add bots ([0123456](https://github.com/octo/confab/commit/0123456789abcdef0123456789abcdef01234567))',
  );
  await expectMessage(
    t,
    ts,
    await gh('push', {
      ref: 'refs/heads/feature',
      before: '1111111111111111111111111111111111111111',
      after: '3333333333333333333333333333333333333333',
      compare: 'https://github.com/octo/confab/compare/x...y',
      created: false,
      deleted: false,
      forced: false,
      commits: [commit('4444444444444444444444444444444444444444', 'Docs', 'mona')],
      sender: GH_SENDER,
      repository: GH_REPO,
    }),
    'confab / feature',
    'octocat [pushed](https://github.com/octo/confab/compare/x...y) 1 commit to branch feature. Commits by mona (1).\n\n' +
      '* Docs ([4444444](https://github.com/octo/confab/commit/4444444444444444444444444444444444444444))',
  );

  const issue = {
    number: 7,
    title: 'Mail is slow',
    html_url: 'https://github.com/octo/confab/issues/7',
    body: 'It takes a minute.',
    assignees: [],
  };
  await expectMessage(
    t,
    ts,
    await gh('issues', { action: 'opened', issue, sender: GH_SENDER, repository: GH_REPO }),
    'confab / issue #7 Mail is slow',
    'octocat opened [issue #7](https://github.com/octo/confab/issues/7):\n\n~~~ quote\nIt takes a minute.\n~~~',
  );
  await expectMessage(
    t,
    ts,
    await gh('issues', { action: 'closed', issue, sender: GH_SENDER, repository: GH_REPO }),
    'confab / issue #7 Mail is slow',
    'octocat closed [issue #7](https://github.com/octo/confab/issues/7).',
  );
  await expectMessage(
    t,
    ts,
    await gh('issue_comment', {
      action: 'created',
      issue,
      comment: { html_url: 'https://github.com/octo/confab/issues/7#c1', body: 'Looking.' },
      sender: GH_SENDER,
      repository: GH_REPO,
    }),
    'confab / issue #7 Mail is slow',
    'octocat [commented](https://github.com/octo/confab/issues/7#c1) on [issue #7](https://github.com/octo/confab/issues/7)\n\n~~~ quote\nLooking.\n~~~',
  );
  const pr = {
    number: 8,
    title: 'Faster mail',
    html_url: 'https://github.com/octo/confab/pull/8',
    body: 'Pool the connections.',
    merged: false,
    head: { ref: 'fast-mail' },
    base: { ref: 'main' },
    assignees: [{ login: 'mona' }],
  };
  await expectMessage(
    t,
    ts,
    await gh('pull_request', {
      action: 'opened',
      pull_request: pr,
      sender: GH_SENDER,
      repository: GH_REPO,
    }),
    'confab / PR #8 Faster mail',
    'octocat opened [PR #8](https://github.com/octo/confab/pull/8) (assigned to mona) from `fast-mail` to `main`:\n\n~~~ quote\nPool the connections.\n~~~',
  );
  await expectMessage(
    t,
    ts,
    await gh('pull_request', {
      action: 'closed',
      pull_request: { ...pr, merged: true },
      sender: GH_SENDER,
      repository: GH_REPO,
    }),
    'confab / PR #8 Faster mail',
    'octocat merged [PR #8](https://github.com/octo/confab/pull/8).',
  );
  await expectMessage(
    t,
    ts,
    await gh('release', {
      action: 'published',
      release: {
        tag_name: 'v1.0',
        name: 'First',
        html_url: 'https://github.com/octo/confab/releases/v1.0',
      },
      sender: GH_SENDER,
      repository: GH_REPO,
    }),
    'confab / v1.0 First',
    'octocat published release [First](https://github.com/octo/confab/releases/v1.0) for tag v1.0.',
  );
  await expectMessage(
    t,
    ts,
    await gh('star', { action: 'created', sender: GH_SENDER, repository: GH_REPO }),
    'confab',
    'octocat starred the repository [octo/confab](https://github.com/octo/confab).',
  );

  // Refusals: no event header, an event not handled, a payload GitHub would not send.
  const noHeader = await post(ts, hookUrl(hook, 'github'), { sender: GH_SENDER });
  assertError(t, noHeader, "Missing the HTTP event header 'X-GitHub-Event'", {
    code: 'MISSING_HTTP_EVENT_HEADER',
  });
  assertError(
    t,
    await gh('fork', { sender: GH_SENDER, repository: GH_REPO }),
    "The 'fork' event isn't currently supported by the GitHub webhook; ignoring",
    { code: 'UNSUPPORTED_WEBHOOK_EVENT_TYPE' },
  );
  assertError(
    t,
    await gh('issues', { action: 'opened', issue: { number: 'seven' }, sender: GH_SENDER }),
    'Unable to parse request: Did GitHub generate this event?',
    { code: 'ANOMALOUS_WEBHOOK_PAYLOAD' },
  );
  assertError(t, await gh('push', '{not json'), 'Malformed JSON', { code: 'INVALID_JSON' });
});

t.test('GitLab', async (t) => {
  const { ts, hook } = await setup(t);
  const gl = (event: string, payload: unknown) =>
    post(ts, hookUrl(hook, 'gitlab'), payload, { 'x-gitlab-event': event });
  const project = { name: 'confab', web_url: 'https://gitlab.example.com/octo/confab' };
  await expectMessage(
    t,
    ts,
    await gl('Push Hook', {
      object_kind: 'push',
      ref: 'refs/heads/main',
      before: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
      after: 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb',
      user_name: 'Tom',
      project,
      commits: [
        {
          id: 'cccccccccccccccccccccccccccccccccccccccc',
          url: 'https://gitlab.example.com/octo/confab/-/commit/ccc',
          message: 'Retry mail\n',
          author: { name: 'Tom' },
        },
      ],
    }),
    'confab / main',
    'Tom [pushed](https://gitlab.example.com/octo/confab/-/compare/aaaaaaa...bbbbbbb) 1 commit to branch main.\n\n' +
      '* Retry mail ([ccccccc](https://gitlab.example.com/octo/confab/-/commit/ccc))',
  );
  await expectMessage(
    t,
    ts,
    await gl('Merge Request Hook', {
      object_kind: 'merge_request',
      user: { name: 'Tom', username: 'tom' },
      project,
      object_attributes: {
        iid: 3,
        title: 'Bots',
        url: 'https://gitlab.example.com/octo/confab/-/merge_requests/3',
        action: 'open',
        description: 'Adds bots.',
        source_branch: 'bots',
        target_branch: 'main',
      },
      assignees: [],
    }),
    'confab / MR #3 Bots',
    'Tom created [MR #3](https://gitlab.example.com/octo/confab/-/merge_requests/3) from `bots` to `main`:\n\n~~~ quote\nAdds bots.\n~~~',
  );
  await expectMessage(
    t,
    ts,
    await gl('Issue Hook', {
      object_kind: 'issue',
      user: { name: 'Tom' },
      project,
      object_attributes: {
        iid: 9,
        title: 'Flaky test',
        url: 'https://gitlab.example.com/octo/confab/-/issues/9',
        action: 'close',
      },
    }),
    'confab / issue #9 Flaky test',
    'Tom closed [issue #9](https://gitlab.example.com/octo/confab/-/issues/9).',
  );
  await expectMessage(
    t,
    ts,
    await gl('Pipeline Hook', {
      object_kind: 'pipeline',
      project,
      object_attributes: { id: 55, ref: 'main', status: 'failed' },
      builds: [
        { name: 'test', status: 'failed' },
        { name: 'lint', status: 'success' },
      ],
    }),
    'confab / main',
    '[Pipeline (55)](https://gitlab.example.com/octo/confab/-/pipelines/55) changed status to failed with build(s):\n* test - failed\n* lint - success',
  );
  assertError(
    t,
    await gl('Wiki Page Hook', { project }),
    "The 'Wiki Page Hook' event isn't currently supported by the GitLab webhook; ignoring",
    { code: 'UNSUPPORTED_WEBHOOK_EVENT_TYPE' },
  );
});

t.test('Grafana, Alertmanager and Sentry alerts', async (t) => {
  const { ts, hook } = await setup(t);
  await expectMessage(
    t,
    ts,
    await post(ts, hookUrl(hook, 'grafana'), {
      receiver: 'confab',
      status: 'firing',
      alerts: [
        {
          status: 'firing',
          labels: { alertname: 'HighLatency', instance: 'web-1' },
          annotations: { summary: 'p99 over 1 s' },
          startsAt: '2026-12-03T10:00:00Z',
          endsAt: '0001-01-01T00:00:00Z',
          generatorURL: 'https://grafana.example.com/alerting/1/view',
          fingerprint: 'abc',
          silenceURL: 'https://grafana.example.com/alerting/silence/new',
          valueString: '[ var=A value=1.7 ]',
        },
      ],
      title: '[FIRING:1] HighLatency',
    }),
    '[HighLatency]',
    ':alert: **FIRING**\n\n**HighLatency**\n\nThis alert was fired at <time:2026-12-03T10:00:00Z>.\n\n' +
      'Labels:\n- alertname: HighLatency\n- instance: web-1\n\nValues:\n[ var=A value=1.7 ]\n\n' +
      'Annotations:\n- summary: p99 over 1 s\n\n' +
      '[Generator](https://grafana.example.com/alerting/1/view)\n' +
      '[Silence](https://grafana.example.com/alerting/silence/new)',
  );
  await expectMessage(
    t,
    ts,
    await post(ts, hookUrl(hook, 'grafana'), {
      title: '[Alerting] Disk full',
      ruleName: 'Disk full',
      ruleUrl: 'https://grafana.example.com/d/1',
      state: 'alerting',
      message: 'Disk over 95%',
      evalMatches: [{ metric: 'disk', value: 97 }],
    }),
    '[Alerting] Disk full',
    ':alert: **ALERTING**\n\n[Disk full](https://grafana.example.com/d/1)\n\nDisk over 95%\n\n**disk:** 97',
  );

  const alert = (status: string, instance: string, name: string) => ({
    status,
    labels: { alertname: name, instance },
    annotations: {},
    generatorURL: `https://prom.example.com/graph?g0.expr=up&g0.tab=1`,
  });
  assertSuccess(
    t,
    await post(ts, hookUrl(hook, 'alertmanager'), {
      version: '4',
      status: 'firing',
      alerts: [
        alert('firing', 'db-1', 'DiskFull'),
        alert('firing', 'db-1', 'HighLoad'),
        alert('resolved', 'web-2', 'InstanceDown'),
      ],
    }),
  );
  const res = await ts.api.get('hamlet', 'messages', {
    anchor: 'newest',
    num_before: 2,
    num_after: 0,
    apply_markdown: false,
    narrow: [{ operator: 'channel', operand: 'devel' }],
  });
  t.match(assertSuccess(t, res).messages, [
    {
      subject: 'db-1',
      content:
        ':alert: **FIRING**\n* DiskFull ([graph](https://prom.example.com/graph?g0.expr=up&g0.tab=0))\n' +
        '* HighLoad ([graph](https://prom.example.com/graph?g0.expr=up&g0.tab=0))',
    },
    {
      subject: 'web-2',
      content:
        ':squared_ok: **Resolved** InstanceDown ([graph](https://prom.example.com/graph?g0.expr=up&g0.tab=0))',
    },
  ]);

  await expectMessage(
    t,
    ts,
    await post(ts, hookUrl(hook, 'sentry'), {
      action: 'created',
      actor: { type: 'application', name: 'Sentry' },
      data: {
        issue: {
          title: "TypeError: Cannot read properties of undefined (reading 'id')",
          level: 'error',
          lastSeen: '2026-12-03T11:22:33.456Z',
          assignedTo: null,
        },
      },
    }),
    // Topics are cut at 60 characters, as the reference's.
    "TypeError: Cannot read properties of undefined (reading '...",
    "**New issue created:** TypeError: Cannot read properties of undefined (reading 'id')\n" +
      '```quote\n**level:** error\n**timestamp:** 2026-12-03 11:22:33\n**assignee:** No one\n```',
  );
  await expectMessage(
    t,
    ts,
    await post(ts, hookUrl(hook, 'sentry'), {
      action: 'resolved',
      actor: { type: 'user', name: 'Mona' },
      data: {
        issue: { title: 'Timeout', lastSeen: '2026-12-03T11:00:00Z', assignedTo: null },
      },
    }),
    'Timeout',
    'Issue **Timeout** was marked as resolved by **Mona**.',
  );
  assertError(
    t,
    await post(ts, hookUrl(hook, 'alertmanager'), { alerts: [{ status: 'odd' }] }),
    'Unable to parse request: Did Alertmanager generate this event?',
    { code: 'ANOMALOUS_WEBHOOK_PAYLOAD' },
  );
});

t.test('who posts where: keys, channels, the owner', async (t) => {
  const { ts, hook } = await setup(t);
  // HTTP Basic works as well as api_key.
  const basic = 'Basic ' + Buffer.from(`${hook.email}:${hook.api_key}`).toString('base64');
  await expectMessage(
    t,
    ts,
    await post(
      ts,
      '/api/v1/external/json?stream=devel&topic=basic',
      { a: 1 },
      { authorization: basic },
    ),
    'basic',
    '```json\n{\n  "a": 1\n}\n```',
  );
  const bad = await post(ts, '/api/v1/external/json?api_key=nope&stream=devel', {});
  t.equal(bad.status, 401);
  t.equal(bad.body.msg, 'Invalid API key');
  const none = await post(ts, '/api/v1/external/json?stream=devel', {});
  t.equal(none.status, 401);
  const unknown = await post(ts, `/api/v1/external/nosuch?api_key=${hook.api_key}`, {});
  t.equal(unknown.status, 404);
  t.equal(unknown.body.msg, "Unknown integration 'nosuch'");

  // No channel: a direct message to the bot's owner.
  assertSuccess(t, await post(ts, `/api/v1/external/json?api_key=${hook.api_key}`, { b: 2 }));
  const dms = assertSuccess(
    t,
    await ts.api.get('hamlet', 'messages', {
      anchor: 'newest',
      num_before: 1,
      num_after: 0,
      apply_markdown: false,
      narrow: [{ operator: 'dm', operand: [hook.id] }],
    }),
  ).messages as { content: string; sender_id: number }[];
  t.match(dms, [{ sender_id: hook.id, content: /"b": 2/ }]);

  // Never where the bot may not post: a private channel it is not in, an unknown channel.
  await createChannel(ts.api, 'iago', 'secret', { invite_only: true });
  const secret = await post(ts, `/api/v1/external/json?api_key=${hook.api_key}&stream=secret`, {});
  t.equal(secret.status, 400);
  t.match(secret.body.msg, /Channel 'secret' does not exist|Not authorized to send/);
  const missing = await post(
    ts,
    `/api/v1/external/json?api_key=${hook.api_key}&stream=nowhere`,
    {},
  );
  t.equal(missing.status, 400);
  t.equal(missing.body.code, 'STREAM_DOES_NOT_EXIST');
  // A deactivated bot's key no longer posts.
  assertSuccess(t, await ts.api.delete('hamlet', `bots/${hook.id}`));
  const gone = await post(ts, hookUrl(hook, 'json'), {});
  t.equal(gone.status, 401);
  t.equal(gone.body.msg, 'Account is deactivated');
});
