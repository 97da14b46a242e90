/** Mock upstream servers for tests; see README.md beside this file. */
export {
  MockUpstreamServer,
  type MockBehaviour,
  type MockBehaviourSource,
  type MockInterruption,
  type MockOutcome,
  type MockSseEvent,
  type MockStreamOptions,
  type RecordedRequest,
} from './mock-upstream-server.ts';
export {
  MockOpenAIServer,
  lastUserText,
  type MockOpenAIReply,
  type MockOpenAIToolCall,
  type MockOpenAIUsage,
} from './openai-compatible-mock.ts';
export {
  MockAnthropicServer,
  lastAnthropicUserText,
  type MockAnthropicReply,
  type MockAnthropicToolUse,
  type MockAnthropicUsage,
} from './anthropic-mock.ts';
export { anthropicFixtureEvents, openAIFixtureEvents, readChunkFixture, readJsonFixture } from './fixtures.ts';
