// Talks to the stub's OpenAI-compatible endpoints with the official OpenAI
// SDK, as an application would, and prints one JSON line per check for
// servers/stub/openai_sdk_test.go to compare with what the stub was told.
// Usage: node sdk.mjs BASE_URL (e.g. http://127.0.0.1:8080/v1)
import OpenAI from 'openai';

const client = new OpenAI({ baseURL: process.argv[2], apiKey: 'unused-by-the-stub', maxRetries: 0, timeout: 20000 });
const print = (check, v) => console.log(JSON.stringify({ check, ...v }));

// A streamed chat completion with the usage chunk.
const stream = await client.chat.completions.create({
  model: 'openload-stub',
  messages: [{ role: 'user', content: 'Say hello to the stub, please!' }], // 8 cl100k_base tokens
  max_tokens: 5,
  stream: true,
  stream_options: { include_usage: true },
});
let chunks = 0, text = '', finish = null, usage = null, emptyChoices = 0;
for await (const chunk of stream) {
  chunks++;
  if (chunk.object !== 'chat.completion.chunk') throw new Error(`object ${chunk.object}`);
  if (chunk.choices.length === 0) emptyChoices++;
  if (chunk.usage) usage = chunk.usage;
  for (const c of chunk.choices) {
    text += c.delta?.content ?? '';
    finish = c.finish_reason ?? finish;
  }
}
print('chat-stream', { chunks, text, finish_reason: finish, usage, usage_chunks_without_choices: emptyChoices });

// The same, read through the SDK's stream helper, which assembles the
// final completion itself.
const runner = client.chat.completions.stream({
  model: 'openload-stub',
  messages: [{ role: 'user', content: 'abcd' }],
  max_tokens: 3,
  stream_options: { include_usage: true },
});
const final = await runner.finalChatCompletion();
print('chat-stream-helper', { content: final.choices[0].message.content, finish_reason: final.choices[0].finish_reason, usage: final.usage });

// Unstreamed chat and text completions.
const whole = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 });
print('chat', { content: whole.choices[0].message.content, finish_reason: whole.choices[0].finish_reason, usage: whole.usage });
const text_ = await client.completions.create({ model: 'm', prompt: 'abcdefgh', max_tokens: 2 });
print('completion', { text: text_.choices[0].text, finish_reason: text_.choices[0].finish_reason, usage: text_.usage });

// A streamed text completion.
let ctext = '';
for await (const c of await client.completions.create({ model: 'm', prompt: 'x', max_tokens: 3, stream: true })) {
  ctext += c.choices[0]?.text ?? '';
}
print('completion-stream', { text: ctext });

// The models list, and a refused request as the SDK reports it.
const models = [];
for await (const m of client.models.list()) models.push(m.id);
print('models', { ids: models });
try {
  await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 0 });
  print('bad-request', { thrown: false });
} catch (e) {
  print('bad-request', { thrown: true, class: e.constructor.name, status: e.status, param: e.param, type: e.type });
}
