// @ts-check
// The models page: catalogue, prices, getting-started snippets.
import { html, number, usd, DataTable, ErrorNote, usePoll } from './components.js';

/** @typedef {import('./types.js').ModelObject} ModelObject */

/** @type {import('./components.js').Column<ModelObject>[]} */
const COLUMNS = [
  {
    label: 'Model',
    cell: (entry) => html`<code>${entry.id}</code>
      ${entry.description ? html`<div class="muted">${entry.description}</div>` : null}`,
  },
  { label: 'Capabilities', cell: (entry) => entry.capabilities.join(', ') },
  { label: 'Context', cell: (entry) => number(entry.context_window) },
  { label: 'Input / 1M', cell: (entry) => usd(entry.pricing.input_per_million) },
  { label: 'Output / 1M', cell: (entry) => usd(entry.pricing.output_per_million) },
];

/** @param {string} model */
function snippets(model) {
  const base = `${location.origin}/v1`;
  return {
    curl: [
      `curl ${base}/chat/completions \\`,
      '  -H "Authorization: Bearer $SWITCHYARD_API_KEY" \\',
      '  -H "Content-Type: application/json" \\',
      `  -d '{"model": "${model}", "messages": [{"role": "user", "content": "Hello"}]}'`,
    ].join('\n'),
    openai: [
      "import OpenAI from 'openai';",
      `const client = new OpenAI({ baseURL: '${base}', apiKey: process.env.SWITCHYARD_API_KEY });`,
      `const answer = await client.chat.completions.create({ model: '${model}', messages: [{ role: 'user', content: 'Hello' }] });`,
      'console.log(answer.choices[0].message.content);',
    ].join('\n'),
    anthropic: [
      "import Anthropic from '@anthropic-ai/sdk';",
      `const client = new Anthropic({ baseURL: '${location.origin}', apiKey: process.env.SWITCHYARD_API_KEY });`,
      `const message = await client.messages.create({ model: '${model}', max_tokens: 256, messages: [{ role: 'user', content: 'Hello' }] });`,
      'console.log(message.content);',
    ].join('\n'),
  };
}

export function ModelsPage() {
  /** @type {[import('./components.js').Polled<import('./types.js').ListOf<ModelObject>>, () => void]} */
  const [{ data, error }] = usePoll('models', 0);
  const model = data?.data.find((entry) => entry.capabilities.includes('chat'))?.id ?? 'MODEL';
  return html`<main>
    <h1>Models</h1>
    <section class="card" aria-labelledby="start-title">
      <h2 id="start-title">Getting started</h2>
      ${Object.entries(snippets(model)).map(
        ([name, code]) => html`<h3>${name}</h3>
          <pre><code>${code}</code></pre>`,
      )}
    </section>
    <${ErrorNote} error=${error} />
    <${DataTable}
      label="Models"
      columns=${COLUMNS}
      rows=${data?.data}
      rowKey=${(/** @type {ModelObject} */ entry) => entry.id}
      loading=${null}
    />
  </main>`;
}
