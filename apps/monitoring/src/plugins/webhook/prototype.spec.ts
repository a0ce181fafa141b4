import { apiDirectWebhook } from './api-direct';
import { grafanaWebhook } from './grafana';
import { NO_PRIVATE_DESTINATIONS } from '@platform/net';

const ctx = { outbound: NO_PRIVATE_DESTINATIONS, snsConfirmHosts: [] };
const polluted = () => ({}) as Record<string, unknown>;

// Payload keys are a monitoring system's data: kept as own properties whatever they are called, and
// never a path into a prototype.
describe('webhook plugins and prototype keys', () => {
  afterEach(() => expect(polluted().polluted).toBeUndefined());

  it('grafana keeps labels called __proto__ and constructor as additional_info', async () => {
    const payload = JSON.parse(
      '{"groupKey":"g","status":"firing","title":"t","alerts":[{"status":"firing"}],"commonLabels":{"alertname":"A","__proto__":"p","constructor":"c"}}',
    );
    const { events } = await grafanaWebhook.parse({}, payload, ctx);
    expect(Object.keys(events[0].additional_info ?? {})).toEqual(expect.arrayContaining(['__proto__', 'constructor', 'alertname']));
    expect((events[0].additional_info as Record<string, unknown>)['__proto__']).toBe('p');
  });

  it('api-direct templates read own properties only, and load_json never writes through a prototype', async () => {
    const payload = JSON.parse('{"event_key":"k","title":"t","x":{"__proto__":"{\\"polluted\\":1}"}}');
    const options = { load_json: ['x.__proto__'], convert_data: { event_key: '{{ event_key }}', title: '{{ constructor }}{{ title }}' } };
    const { events } = await apiDirectWebhook.parse(options, payload, ctx);
    expect(events[0].title).toBe('t');
    expect(() => apiDirectWebhook.checkOptions?.({ load_json: ['a.constructor'] })).toThrow(/load_json\[0\]/);
  });
});
