/**
 * web/state/profile-fields.ts: what a person's card shows of their custom profile fields (the
 * summary ones, or all; pronouns apart; each type's value as the reference shows it), what the
 * Profile settings send (changed values, cleared ones), what an administrator's form sends
 * (choices, an external account's kind, the changes of an edit) and the order after a move.
 */
import t from 'tap';
import type { CustomProfileField, ProfileData } from '../../src/client/types.js';
import {
  cardFields,
  changesOf,
  choicesOf,
  createParams,
  draftOf,
  draftProblem,
  emptyDraft,
  entriesOf,
  externalLink,
  FieldType,
  formatDate,
  missingRequired,
  movedOrder,
  summaryFull,
  updateParams,
  withValue,
} from '../../web/state/profile-fields.js';

const field = (id: number, type: number, o: Partial<CustomProfileField> = {}) =>
  ({
    id,
    name: `Field ${id}`,
    type,
    hint: '',
    field_data: '',
    order: id,
    required: false,
    editable_by_user: true,
    ...o,
  }) as CustomProfileField;

const editor = field(3, FieldType.SELECT, {
  name: 'Editor',
  field_data: JSON.stringify({ a: { text: 'Vim', order: '2' }, b: { text: 'Emacs', order: '1' } }),
  display_in_profile_summary: true,
});
const github = field(7, FieldType.EXTERNAL_ACCOUNT, {
  name: 'GitHub',
  field_data: JSON.stringify({ subtype: 'github' }),
});
const custom = field(8, FieldType.EXTERNAL_ACCOUNT, {
  name: 'Wiki',
  field_data: JSON.stringify({
    subtype: 'custom',
    url_pattern: 'https://wiki.example/u/%(username)s',
  }),
});

t.test("a choice field's options, in their order", (t) => {
  t.same(choicesOf(editor), [
    { id: 'b', text: 'Emacs' },
    { id: 'a', text: 'Vim' },
  ]);
  t.same(choicesOf(field(1, FieldType.SELECT, { field_data: 'not json' })), [], 'bad data: none');
  t.end();
});

t.test("an external account's link: its kind's pattern, or the field's own", (t) => {
  t.equal(externalLink(github, 'octocat'), 'https://github.com/octocat');
  t.equal(externalLink(custom, 'ada lovelace'), 'https://wiki.example/u/ada%20lovelace');
  t.equal(
    externalLink(github, 'octocat', { github: { url_pattern: 'https://gh.example/%(username)s' } }),
    'https://gh.example/octocat',
    "the server's kinds first",
  );
  const unknown = field(9, FieldType.EXTERNAL_ACCOUNT, { field_data: '{"subtype":"myspace"}' });
  t.equal(externalLink(unknown, 'tom'), undefined, 'a kind no one knows: no link');
  t.end();
});

t.test('dates as the card shows them', (t) => {
  t.equal(formatDate('2026-12-06'), 'Dec 6, 2026');
  t.equal(formatDate('1999-01-31'), 'Jan 31, 1999');
  t.equal(formatDate('soon'), 'soon', 'not a date: as it is');
  t.end();
});

t.test("the card: summary fields with values, pronouns apart, each type's value", (t) => {
  const fields = [
    field(1, FieldType.SHORT_TEXT, { name: 'Team', display_in_profile_summary: true, order: 2 }),
    field(2, FieldType.LONG_TEXT, { name: 'Bio' }),
    editor,
    field(4, FieldType.DATE, { name: 'Birthday', display_in_profile_summary: false }),
    field(5, FieldType.URL, { name: 'Site' }),
    field(6, FieldType.USER, { name: 'Manager' }),
    github,
    field(9, FieldType.PRONOUNS, { name: 'Pronouns' }),
    field(10, FieldType.SHORT_TEXT, { name: 'Empty', display_in_profile_summary: true }),
  ];
  const profile_data: ProfileData = {
    '1': { value: 'Infra', rendered_value: '<p>Infra</p>' },
    '2': { value: 'I *like* tea', rendered_value: '<p>I <em>like</em> tea</p>' },
    '3': { value: 'a' },
    '4': { value: '2026-12-06' },
    '5': { value: 'https://example.com/me' },
    '6': { value: '[12, 14]' },
    '7': { value: 'octocat' },
    '9': { value: 'she/her' },
    '10': { value: '' },
  };
  const user = { profile_data, is_bot: false };
  const summary = cardFields(user, fields, { all: false });
  t.equal(summary.pronouns, 'she/her', 'pronouns go after the name, not among the fields');
  t.same(
    summary.fields.map((f) => f.name),
    ['Team', 'Editor'],
    'the summary fields, by the order field (not the id)',
  );
  t.match(summary.fields[0], { kind: 'html', html: '<p>Infra</p>' });
  t.match(summary.fields[1], { kind: 'text', text: 'Vim' }, "a choice: the option's text");
  t.equal(summary.more, true, 'more fields have values: the full profile has them');

  const all = cardFields(user, fields, { all: true });
  t.same(
    all.fields.map((f) => f.name),
    ['Team', 'Bio', 'Editor', 'Birthday', 'Site', 'Manager', 'GitHub'],
    'every field with a value, the empty one left out',
  );
  const byName = new Map(all.fields.map((f) => [f.name, f]));
  t.match(byName.get('Birthday'), { kind: 'text', text: 'Dec 6, 2026' });
  t.match(byName.get('Site'), { kind: 'link', href: 'https://example.com/me' });
  t.match(byName.get('Manager'), { kind: 'people', ids: [12, 14] });
  t.match(byName.get('GitHub'), {
    kind: 'link',
    text: 'octocat',
    href: 'https://github.com/octocat',
  });
  t.equal(all.more, false);

  const plain = cardFields({ is_bot: false }, fields, { all: true });
  t.same(plain, { pronouns: undefined, fields: [], more: false }, 'no values: nothing');
  const gone = cardFields({ is_bot: false, profile_data: { '3': { value: 'zz' } } }, [editor], {
    all: true,
  });
  t.same(gone.fields, [], 'a choice that no longer exists: not shown');
  const two = cardFields(
    { is_bot: false, profile_data: { '9': { value: 'they/them' }, '11': { value: 'ze/hir' } } },
    [field(9, FieldType.PRONOUNS), field(11, FieldType.PRONOUNS)],
    { all: false },
  );
  t.equal(two.pronouns, 'they/them, ze/hir', 'two pronouns fields: both, joined');
  t.end();
});

t.test("a value's event changes one entry of profile_data", (t) => {
  const data: ProfileData = { '1': { value: 'a' }, '2': { value: 'b' } };
  t.same(withValue(data, { id: 1, value: 'x', rendered_value: '<p>x</p>' }), {
    '1': { value: 'x', rendered_value: '<p>x</p>' },
    '2': { value: 'b' },
  });
  t.same(withValue(data, { id: 2, value: null }), { '1': { value: 'a' } }, 'null: removed');
  t.same(withValue(undefined, { id: 3, value: 'c' }), { '3': { value: 'c' } });
  t.same(data, { '1': { value: 'a' }, '2': { value: 'b' } }, 'the old one is left as it was');
  t.end();
});

t.test('the Profile form: what it sends, what it clears, what is missing', (t) => {
  const fields = [
    field(1, FieldType.SHORT_TEXT, { required: true, name: 'Team' }),
    field(2, FieldType.USER, { name: 'Manager' }),
    field(3, FieldType.DATE, { required: true, name: 'Birthday' }),
    field(4, FieldType.URL),
  ];
  const before = entriesOf(fields, { '1': { value: 'Infra' }, '2': { value: '[5]' } });
  t.same(
    [...before],
    [
      [1, 'Infra'],
      [2, [5]],
      [3, ''],
      [4, ''],
    ],
  );
  const now = new Map(before);
  t.same(changesOf(fields, before, now), { update: [], remove: [] }, 'nothing changed');
  now.set(1, '  Web  ');
  now.set(2, [5, 6]);
  now.set(4, '');
  t.same(changesOf(fields, before, now), {
    update: [
      { id: 1, value: 'Web' },
      { id: 2, value: [5, 6] },
    ],
    remove: [],
  });
  now.set(1, '   ');
  now.set(2, []);
  t.same(
    changesOf(fields, before, now),
    { update: [], remove: [1, 2] },
    'emptied: cleared with DELETE, not sent empty',
  );
  t.same(missingRequired(fields, now), ['Team', 'Birthday']);
  t.end();
});

t.test("an administrator's form: create, edit, problems", (t) => {
  const d = { ...emptyDraft(), name: ' Editor ', type: FieldType.SELECT };
  d.choices = [{ text: 'Vim' }, { text: ' ' }, { text: 'Emacs' }];
  t.same(createParams(d), {
    name: 'Editor',
    hint: '',
    field_type: FieldType.SELECT,
    field_data: JSON.stringify({
      0: { text: 'Vim', order: '1' },
      1: { text: 'Emacs', order: '2' },
    }),
    display_in_profile_summary: false,
    required: false,
    editable_by_user: true,
  });
  t.equal(draftProblem({ ...d, name: ' ' }), 'Enter a name for the field.');
  t.equal(draftProblem({ ...d, choices: [{ text: '' }] }), 'Add at least one choice.');
  t.equal(
    draftProblem({ ...d, choices: [{ text: 'A' }, { text: 'A ' }] }),
    'Each choice must be different.',
  );
  t.equal(draftProblem(d), null);

  const gh = {
    ...emptyDraft(),
    type: FieldType.EXTERNAL_ACCOUNT,
    subtype: 'github',
    summary: true,
  };
  t.same(
    createParams(gh),
    {
      field_type: 7,
      field_data: '{"subtype":"github"}',
      display_in_profile_summary: true,
      required: false,
      editable_by_user: true,
    },
    "a default account: no name or hint (the server's)",
  );
  t.equal(draftProblem(gh), null, 'and none needed');
  const wiki = { ...gh, subtype: 'custom', name: 'Wiki', urlPattern: 'https://wiki.example/' };
  t.equal(draftProblem(wiki), 'The URL pattern must contain %(username)s.');
  t.match(createParams({ ...wiki, urlPattern: 'https://w.example/%(username)s' }), {
    name: 'Wiki',
    field_data: '{"subtype":"custom","url_pattern":"https://w.example/%(username)s"}',
  });
  t.equal(
    createParams({ ...emptyDraft(), name: 'Bio', type: FieldType.LONG_TEXT, summary: true })
      .display_in_profile_summary,
    false,
    'a long text is never on the card',
  );

  // Editing: only what changed; a choice keeps its id, a new one takes a free one.
  const edit = draftOf(editor);
  t.same(updateParams(editor, edit), {}, 'nothing changed');
  edit.choices = [...edit.choices, { text: 'Nano' }];
  edit.required = true;
  t.same(updateParams(editor, edit), {
    field_data: JSON.stringify({
      b: { text: 'Emacs', order: '1' },
      a: { text: 'Vim', order: '2' },
      0: { text: 'Nano', order: '3' },
    }),
    required: true,
  });
  t.same(updateParams(editor, { ...draftOf(editor), name: 'IDE', summary: false }), {
    name: 'IDE',
    display_in_profile_summary: false,
  });
  t.same(
    updateParams(github, { ...draftOf(github), name: 'Other', summary: true }),
    { display_in_profile_summary: true },
    "a default account's name is not sent",
  );
  t.end();
});

t.test('moving a field up or down; the card limit', (t) => {
  const fields = [field(5, 1, { order: 0 }), field(2, 1, { order: 1 }), field(9, 1, { order: 2 })];
  t.same(movedOrder(fields, 2, -1), [2, 5, 9]);
  t.same(movedOrder(fields, 2, 1), [5, 9, 2]);
  t.same(movedOrder(fields, 5, -1), [5, 2, 9], 'the first one stays first');
  t.same(movedOrder(fields, 9, 1), [5, 2, 9], 'the last one stays last');
  t.same(movedOrder(fields, 77, 1), [5, 2, 9], 'an unknown field: the order as it is');
  const shown = [
    field(1, 1, { display_in_profile_summary: true }),
    field(2, 1, { display_in_profile_summary: true }),
    field(3, 1),
  ];
  t.equal(summaryFull(shown), true, 'two on the card: full');
  t.equal(summaryFull(shown, 2), false, 'but for one of those two, being edited');
  t.equal(summaryFull(shown.slice(1)), false);
  t.end();
});
