// The models page: catalogue, prices, getting-started snippets.
import { useCallback } from 'preact/hooks';
import { api } from './api.js';
import { html, number, usd, ErrorNote, usePoll } from './components.js';

export function ModelsPage() {
  const load = useCallback(() => api('models'), []);
  const [{ data, error }] = usePoll(load, 0);
  const base = `${location.origin}/v1`;
  const model = data?.data.find((entry) => entry.capabilities.includes('chat'))?.id ?? 'MODEL';
  const snippets = {
    curl: `curl ${base}/chat/completions \\\n  -H "Authorization: Bearer $SWITCHYARD_API_KEY" \\\n  -H "Content-Type: application/json" \\\n  -d '{"model": "${model}", "messages": [{"role": "user", "content": "Hello"}]}'`,
    openai: `import OpenAI from 'openai';\nconst client = new OpenAI({ baseURL: '${base}', apiKey: process.env.SWITCHYARD_API_KEY });\nconst answer = await client.chat.completions.create({ model: '${model}', messages: [{ role: 'user', content: 'Hello' }] });\nconsole.log(answer.choices[0].message.content);`,
    anthropic: `import Anthropic from '@anthropic-ai/sdk';\nconst client = new Anthropic({ baseURL: '${location.origin}', apiKey: process.env.SWITCHYARD_API_KEY });\nconst message = await client.messages.create({ model: '${model}', max_tokens: 256, messages: [{ role: 'user', content: 'Hello' }] });\nconsole.log(message.content);`,
  };
  return html`<main>
    <h1>Models</h1>
    <section class="card" aria-labelledby="start-title">
      <h2 id="start-title">Getting started</h2>
      ${Object.entries(snippets).map(([name, code]) => html`<h3>${name}</h3><pre><code>${code}</code></pre>`)}
    </section>
    <${ErrorNote} error=${error} />
    ${
      data
        ? html`<div class="table-wrap"><table aria-label="Models">
          <thead><tr><th scope="col">Model</th><th scope="col">Capabilities</th><th scope="col">Context</th><th scope="col">Input / 1M</th><th scope="col">Output / 1M</th></tr></thead>
          <tbody>${data.data.map(
            (entry) =>
              html`<tr key=${entry.id}><td><code>${entry.id}</code>${entry.description ? html`<div class="muted">${entry.description}</div>` : null}</td><td>${entry.capabilities.join(', ')}</td><td>${number(entry.context_window)}</td><td>${usd(entry.pricing.input_per_million)}</td><td>${usd(entry.pricing.output_per_million)}</td></tr>`,
          )}</tbody>
        </table></div>`
        : null
    }
  </main>`;
}
