import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { messagesErrorEvent, toAnthropicErrorType, withMessagesErrorType } from '../../../src/formats/anthropic-messages/error-envelope.ts';
import { invalidParameter, serverError } from '../../../src/core/service-error.ts';

describe('message-style error envelope', () => {
  test('the SPEC envelope keeps its fields and gains top-level type "error" and request_id', () => {
    const envelope = {
      error: { message: 'bad', type: 'invalid_request_error', code: 'invalid_parameter', param: 'temperature', details: null },
      info_metadata: { creator: 'switchyard', status: false, request_id: 'req_1' },
    };
    const body = withMessagesErrorType(envelope, 400);
    assert.deepEqual(body, { type: 'error', ...envelope, request_id: 'req_1' });
    assert.deepEqual(Object.keys(body), ['type', 'error', 'info_metadata', 'request_id']);
  });

  test('a 404 is typed not_found_error (Anthropic API); other statuses keep the SPEC type', () => {
    const envelope = {
      error: { message: 'no model', type: 'invalid_request_error', code: 'model_not_found', param: 'model', details: null },
      info_metadata: { request_id: null },
    };
    assert.equal(withMessagesErrorType(envelope, 404).error.type, 'not_found_error');
    assert.equal(withMessagesErrorType(envelope, 404).error.code, 'model_not_found');
    assert.equal(withMessagesErrorType({ ...envelope, error: { ...envelope.error, type: 'auth_error' } }, 401).error.type, 'auth_error');
  });

  test('Anthropic error types by status (wire-contracts.md)', () => {
    assert.equal(toAnthropicErrorType(400), 'invalid_request_error');
    assert.equal(toAnthropicErrorType(401), 'authentication_error');
    assert.equal(toAnthropicErrorType(403), 'permission_error');
    assert.equal(toAnthropicErrorType(404), 'not_found_error');
    assert.equal(toAnthropicErrorType(413), 'request_too_large');
    assert.equal(toAnthropicErrorType(429), 'rate_limit_error');
    assert.equal(toAnthropicErrorType(500), 'api_error');
    assert.equal(toAnthropicErrorType(500, 'service_unavailable'), 'overloaded_error');
    assert.equal(toAnthropicErrorType(529), 'overloaded_error');
    assert.equal(toAnthropicErrorType(409), 'invalid_request_error');
  });

  test('mid-stream error events', () => {
    assert.deepEqual(messagesErrorEvent(invalidParameter('x', 'Upstream refused.')), {
      event: 'error',
      data: { type: 'error', error: { type: 'invalid_request_error', message: 'Upstream refused.', code: 'invalid_parameter' } },
    });
    assert.deepEqual(messagesErrorEvent(serverError('service_unavailable', 'Busy.')).data, {
      type: 'error',
      error: { type: 'overloaded_error', message: 'Busy.', code: 'service_unavailable' },
    });
    assert.deepEqual(messagesErrorEvent(new TypeError('secret detail')).data, {
      type: 'error',
      error: { type: 'api_error', message: 'The generation failed with an internal error.', code: 'internal_error' },
    });
  });
});
