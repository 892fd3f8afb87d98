// Package prompt makes the request bodies of a model-server load: prompts
// of a known token length and ShareGPT conversations, in the body grammar
// of the server's endpoint.
//
// LLM-serving loads are described in tokens ("prompt 1024, output 128");
// this package turns such a description into bodies and says, per body,
// the prompt tokens it holds and the output tokens it asks for:
//
//	spec := prompt.Spec{
//		API:    prompt.Chat,             // or APIOf(url.Path), ParseAPI(name)
//		Model:  "llama",                 // left out when empty
//		Prompt: prompt.Length{N: 1024, Spread: 0.1},
//		Output: prompt.Length{N: 128},
//		Seed:   1, Count: 1000, IgnoreEOS: true,
//	}
//	bodies, err := prompt.Generate(spec) // []Body{JSON, PromptTokens, MaxTokens}
//
// or, from a ShareGPT file (Spec.Prompt unset: the file gives the prompts),
//
//	bodies, skipped, err := prompt.ReadShareGPT(f, spec, prompt.FirstTurn)
//
// Tokens are OpenAI's cl100k_base, counted by Count. A server's own
// tokenizer counts the same text somewhat differently, and its chat
// template adds tokens of its own, so PromptTokens is the prompt as
// openload counts it; a server's usage count, when it sends one, is the
// server's truth.
//
// # The server's tokenizer
//
// Prompts can be sized by a model server's own tokenizer instead
// (tokenizer.go): ServerTokenizer asks vLLM's, TGI's or llama.cpp's
// POST /tokenize (FindTokenizer probes which), ServerVocabulary keeps the
// built-in words that are one of its tokens alone and after a space and
// measures what it adds to every text (a BOS), Spec.Words makes prompts
// of those, and CheckPrompts counts a sample of whole prompts by the
// server: n words then count n + Vocabulary.Added.
//
// # Lengths
//
// A Length is N tokens, or with a spread s lengths uniform over the
// integers of [⌊N(1−s)⌋, ⌈N(1+s)⌉], vLLM's --random-range-ratio rule
// (Length). ParseLength reads "N" or "N,s".
//
// # Generated prompts
//
// Generate's prompt i is n words drawn from a fixed list of common
// English words (Text), exactly n cl100k_base tokens by construction; its
// length, max tokens and words depend on (Spec.Seed, i) alone, so every
// shard of a split run makes the same body for the same index, and two
// indexes share no prefix a cache could hit, but by a chance of 748⁻¹⁶
// per 16 tokens. Generating 10,000 chat bodies of 1024-token prompts
// takes about 0.3 s on one core, 15 KB and 11 allocations a body
// (BenchmarkGenerate); Count is 0.3 to 0.4 ms per 1024 tokens
// (BenchmarkCount1024), so counting, not generating, is what costs.
//
// # Bodies
//
// Every body is compact JSON with "stream": true, the model when given
// and the max tokens when asked (Output zero: none):
//
//	Chat            /v1/chat/completions  {"model","messages":[{"role":"user","content"}],"max_tokens","stream","stream_options":{"include_usage":true},"ignore_eos"}
//	Completions     /v1/completions       {"model","prompt","max_tokens","stream","stream_options":{"include_usage":true},"ignore_eos"}
//	OllamaGenerate  /api/generate         {"model","prompt","stream","options":{"num_predict"}}
//	OllamaChat      /api/chat             {"model","messages","stream","options":{"num_predict"}}
//	TGI             /generate_stream      {"inputs","parameters":{"max_new_tokens","details":true},"stream"}
//	LlamaCpp        /completion           {"model","prompt","n_predict","stream","ignore_eos"}
//
// "ignore_eos" is written with Spec.IgnoreEOS, for the APIs that have it
// (API.CanIgnoreEOS says where each server's field is, or that it has
// none); asking it of another API is an error rather than a body that
// silently stops at the end of sequence.
//
// # ShareGPT
//
// ReadShareGPT reads the common benchmark file, either as vLLM does (the
// first turn as prompt, the second's length as max tokens, vLLM's length
// filter) or one body per answered human turn, with the conversation so
// far as chat history (Turns).
//
// # Conversations
//
// A multi-turn conversation is a system prompt and user turns
// (Conversation), generated (ConversationSpec.Synthetic, a function of
// (Seed, i) like Generate's bodies, with a system prompt shared by all
// conversations or each one's own) or read from a ShareGPT file
// (ReadConversations: the human turns, the recorded answers' lengths as
// max tokens). The assistant's turns are the model's own answers: a
// turn's body (API.TurnBody) is the conversation so far, the answers as
// AnswerText read them from the responses, as messages in the chat
// grammars and as one prompt in the others, so that every turn begins
// with the last one's prompt and answer, token for token, as a prefix
// cache sees them (TestConversationPrefixCache runs it on the stub).
package prompt
