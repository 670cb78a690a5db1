/** The resource-subscription relay's bookkeeping (gateway/upstream/resource-subscriptions.ts): one upstream subscription per URI, reference-counted. */
import { describe, expect, it } from 'vitest';
import { ResourceSubscriptionRelay, requestedResourceSubscriptions } from '../../gateway/upstream/resource-subscriptions.ts';

const quiet = { info: () => {}, warn: () => {} };

function relay() {
  const opened: string[] = [];
  const closed: string[] = [];
  const published: string[] = [];
  const updaters = new Map<string, (uri: string) => void>();
  const r = new ResourceSubscriptionRelay(
    async (uri, onUpdated) => {
      opened.push(uri);
      updaters.set(uri, onUpdated);
      return uri.startsWith('none:') ? undefined : async () => void closed.push(uri);
    },
    (uri) => published.push(uri),
    quiet,
  );
  return { r, opened, closed, published, updaters };
}

describe('ResourceSubscriptionRelay', () => {
  it('opens one upstream subscription per URI however many streams ask, and closes it after the last', async () => {
    const { r, opened, closed } = relay();
    const a = r.retain(['test://a', 'test://b', 'test://a']);
    const b = r.retain(['test://a']);
    expect(opened).toEqual(['test://a', 'test://b']);
    a();
    a();
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toEqual(['test://b']);
    expect(r.watched).toEqual(['test://a']);
    b();
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toEqual(['test://b', 'test://a']);
    expect(r.watched).toEqual([]);
  });

  it('publishes what the upstream reports', async () => {
    const { r, published, updaters } = relay();
    r.retain(['test://a']);
    updaters.get('test://a')!('test://a');
    expect(published).toEqual(['test://a']);
  });

  it('holds a URI no upstream can watch, and reopens after a full release', async () => {
    const { r, opened } = relay();
    const release = r.retain(['none:x']);
    release();
    r.retain(['none:x']);
    await new Promise((resolve) => setImmediate(resolve));
    expect(opened).toEqual(['none:x', 'none:x']);
  });

  it('reads the URIs of a subscriptions/listen request', () => {
    expect(
      requestedResourceSubscriptions({
        method: 'subscriptions/listen',
        params: { notifications: { toolsListChanged: true, resourceSubscriptions: ['a://1', 2, 'b://2'] } },
      }),
    ).toEqual(['a://1', 'b://2']);
    expect(requestedResourceSubscriptions({ method: 'tools/list' })).toEqual([]);
    expect(requestedResourceSubscriptions(null)).toEqual([]);
  });
});
