import { eqConditions } from './conditions';

describe('eqConditions', () => {
  it('makes an eq condition of each named field the request set, in the order named, and none of the others', () => {
    const input = { name: 'a', state: undefined, workspace_id: 'w', project_id: null, other: 'x' };
    expect(eqConditions(input, ['workspace_id', 'name', 'state', 'project_id'])).toEqual([
      { key: 'workspace_id', value: 'w', operator: 'eq' },
      { key: 'name', value: 'a', operator: 'eq' },
    ]);
    expect(eqConditions({ is_managed: false }, ['is_managed'])).toEqual([{ key: 'is_managed', value: false, operator: 'eq' }]);
  });
});
