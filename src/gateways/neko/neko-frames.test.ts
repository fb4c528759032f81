import { describe, expect, it } from 'vitest';
import { parseInboundFrame } from './neko-frames.js';
import { envPort, resolveNekoSettings } from './neko-settings.js';
import { isoMicros } from './neko-wire.js';

const frame = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));

describe('N.E.K.O. frames and settings', () => {
  it('parses an analyze_request into a turn', () => {
    const event = parseInboundFrame(
      frame({
        event_type: 'analyze_request',
        event_id: 'e1',
        trigger: 'weird',
        lanlan_name: '  s1 ',
        messages: [
          {
            role: 'user',
            content: 'hi',
            metadata: { sender_id: 'u7' },
            attachments: [{ type: 'image_url', url: 'data:x' }, { bad: 1 }],
          },
          { role: 'assistant', content: [{ type: 'text', text: 'OK' }] },
          'junk',
        ],
        external_intent: 0.5,
        proactive: true,
        conversation_id: 'c1',
        language: 'en',
      }),
    );
    expect(event).toEqual({
      kind: 'analyze',
      eventId: 'e1',
      input: {
        sessionKey: 's1',
        trigger: 'turn_end',
        messages: [
          { role: 'user', text: 'hi', senderId: 'u7', attachmentUrls: ['data:x'] },
          { role: 'assistant', text: 'OK', attachmentUrls: [] },
        ],
        isProactive: true,
        externalIntent: 0.5,
        conversationId: 'c1',
        language: 'en',
      },
    });
  });

  it('acks without a turn when messages is not an array; defaults the session key', () => {
    expect(
      parseInboundFrame(frame({ event_type: 'analyze_request', event_id: 'e2', messages: 'x' })),
    ).toEqual({ kind: 'analyze', eventId: 'e2' });
    const event = parseInboundFrame(
      frame({ event_type: 'analyze_request', lanlan_name: '', messages: [], trigger: 'session_end' }),
    );
    expect(event).toMatchObject({
      kind: 'analyze',
      input: { sessionKey: '__default__', trigger: 'session_end' },
    });
    expect(event).not.toHaveProperty('eventId');
  });

  it('reads restore signals and ignores everything else', () => {
    expect(
      parseInboundFrame(
        frame({ event_type: 'agent_intent_restore_signal', lanlan_name: 's', new_session: true }),
      ),
    ).toEqual({
      kind: 'restore',
      sessionKey: 's',
      isNewSession: true,
    });
    for (const raw of [
      'nope',
      '[]',
      '42',
      '{"x":1}',
      '{"event_type":"voice_transcript_observed"}',
      '{"event_type":"who"}',
    ]) {
      expect(parseInboundFrame(frame(raw)).kind).toBe('ignored');
    }
    expect(parseInboundFrame(Buffer.from([0xc3, 0x28])).kind).toBe('ignored');
    expect(parseInboundFrame(Buffer.alloc(100, 0x20), 10)).toEqual({
      kind: 'ignored',
      reason: 'frame of 100 bytes is too large',
    });
  });

  it('takes ZeroMQ port overrides only when they are integers in 1..65535', () => {
    expect(envPort('50000', 48963)).toBe(50000);
    for (const raw of ['0', 'abc', '70000', '1.5', '', undefined]) expect(envPort(raw, 48963)).toBe(48963);
    const settings = resolveNekoSettings(
      undefined,
      {
        NEKO_ZMQ_ANALYZE_PUSH_PORT: '50000',
        NEKO_ZMQ_AGENT_PUSH_PORT: 'abc',
        NEKO_PLUGIN_EXECUTION_TIMEOUT: '0',
        NEKO_DISABLE_AGENT_AUTO_RESTORE: '1',
      },
      '/w',
    );
    expect(settings).toMatchObject({
      httpHost: '127.0.0.1',
      httpPort: 48915,
      zmq: { sessionPub: 48961, analyzePush: 50000, agentPush: 48962 },
      workDir: '/w',
      pluginTimeoutMs: null,
      isAutoRestoreEnabled: false,
    });
  });

  it('writes times with microseconds', () => {
    expect(isoMicros(Date.UTC(2025, 0, 1, 0, 0, 0, 123))).toBe('2025-01-01T00:00:00.123000Z');
  });
});
