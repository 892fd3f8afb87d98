// Package scripted is a set of in-process model servers that write the
// bytes vLLM, Text Generation Inference (TGI), llama.cpp's server and
// Ollama write, scripted from those servers' own source, so that
// openload's streaming can be judged against what real servers send
// rather than against its own stub. It is a library for tests: it never
// prints and takes no flags.
//
//	h := scripted.New(scripted.VLLMChat, scripted.Options{
//		Model:   "m",
//		Prefill: 20 * time.Millisecond, // time to first token
//		ITL:     5 * time.Millisecond,  // gap between tokens
//	})
//	srv := httptest.NewServer(h)
//	defer srv.Close()
//	// POST srv.URL+scripted.VLLMChat.Path() with {"model":"m","stream":true,
//	// "max_tokens":8,"messages":[…]} streams 8 tokens as vLLM does.
//	st := h.Stats() // what the server read and wrote
//
// # Formats
//
// A Server speaks one Format (Formats lists them): its streaming endpoint
// (Format.Path), GET /v1/models, for Ollama GET /api/tags, and for the
// others POST /tokenize in their server's own shape (tokenize.go).
// Anything else is a plain 404, still counted.
//
//	vllm-chat            POST /v1/chat/completions   SSE, vLLM
//	vllm-completions     POST /v1/completions        SSE, vLLM
//	tgi-generate-stream  POST /generate_stream       SSE, TGI native
//	tgi-chat             POST /v1/chat/completions   SSE, TGI
//	llamacpp-completion  POST /completion            SSE, llama.cpp native
//	llamacpp-chat        POST /v1/chat/completions   SSE, llama.cpp
//	ollama-openai-chat   POST /v1/chat/completions   SSE, Ollama middleware
//	ollama-generate      POST /api/generate          NDJSON, Ollama native
//	ollama-chat          POST /api/chat              NDJSON, Ollama native
//
// Each format's source file (vllm.go, tgi.go, llamacpp.go, ollama.go)
// names, in its leading comment, the repository, files and commits every
// behaviour is taken from, and what is not reproduced byte for byte. The
// bytes are written by this package's own code, never copied.
//
// # The known answer
//
// Every answer is generated, so a test knows it in advance:
//
//   - Output tokens: token i (from 0) is " tok<i+1>" with id 1000+i; one
//     token is one event (chunk, SSE event or NDJSON line), written and
//     flushed on its own so arrival times are real. vLLM's role chunk and
//     llama.cpp's first role delta leave together with the first token,
//     as they do in those servers.
//   - Their number comes from the request's own field, with the server's
//     default when absent: vLLM chat max_completion_tokens, else
//     max_tokens, else max_model_len − prompt; vLLM completions max_tokens,
//     else 16; TGI parameters.max_new_tokens (chat: max_tokens or
//     max_completion_tokens), else max_total_tokens − prompt; llama.cpp
//     n_predict, else max_completion_tokens, else max_tokens, else until
//     the context is full; Ollama options.num_predict (OpenAI side:
//     max_tokens), else −1, which in Ollama has no limit. Options.ContextLen
//     stands for the context window in all of the "− prompt" and "until
//     full" cases (the Ollama one included, where real Ollama would shift
//     its context and go on). Every stream stops for length
//     ("length"/"limit"), never for an end-of-sequence token.
//   - Prompt tokens: the number of whitespace-separated words of the
//     prompt (all message contents for chat), at least 1; it is what the
//     usage, tokens_evaluated, input_length and prompt_eval_count fields
//     report, and what /tokenize counts. Options.Pieces gives the
//     servers a tokenizer of their own instead (⌈bytes/Pieces⌉ tokens a
//     word, and a BOS), so that a client's cl100k_base count and the
//     server's differ, as with a real model.
//   - Timing: Prefill passes between reading the request and writing the
//     first token, ITL between tokens; final events follow the last token
//     at once. vLLM, TGI and llama.cpp send the status and headers as
//     soon as the request is accepted (their frameworks send the head
//     before the body stream yields); Ollama sends them with the first
//     line (gin writes the head lazily).
//
// # Refusals
//
// Each server's own refusals, with its status and body:
//
//   - vLLM: a Content-Type whose media type is not exactly
//     application/json is 400 (validate_json_request, then the
//     RequestValidationError handler); a model other than Options.Model is
//     404 "The model `X` does not exist."; a missing model is accepted.
//   - TGI: a Content-Type that is not application/json or
//     application/*+json is axum's 415 "Expected request with
//     `Content-Type: application/json`"; TGI refuses no model name (chat
//     echoes the requested one).
//   - llama.cpp: no refusal; its handlers parse the body as JSON whatever
//     the Content-Type (or none), and the single-model server ignores the
//     requested model name, reporting its own.
//   - Ollama: the Content-Type is never looked at; an unknown model is 404
//     {"error":"model 'X' not found"}; a missing model is 400 {"error":
//     "model is required"} on /api/chat and the OpenAI endpoint, but on
//     /api/generate it is the unknown-model 404 with X empty.
//
// Requests the servers would answer in ways not scripted here (a
// non-streaming request to an SSE endpoint, malformed JSON, fewer than one
// output token) get 501 with a text body saying so, so that a test that
// strays off the script fails loudly rather than reading invented bytes.
// Ollama's native endpoints do answer "stream": false, with the one
// aggregated object Ollama writes.
//
// # Counting and cuts
//
// Stats reports, safe for concurrent use, the requests read (by method,
// path and status answered), the token events written, and how each
// stream ended: completed, cut, or gone (the client left). A test can
// check that what the server received equals what the client says it
// sent.
//
// Options.Cut stops every stream after Options.CutAfter token events,
// without the final event: CutClose drops the connection mid-body (the
// client reads an unexpected EOF), CutEnd ends the body cleanly (the
// client reads a well-formed stream that just lacks its end: no [DONE],
// no done/stop line), CutError writes the server's own error event for a
// failure during generation and ends the body as the server then does
// (vLLM chat: a data: {"error": …} chunk, then [DONE]; Ollama's native
// endpoints: an {"error": …} line, then nothing). A format whose
// mid-stream error is not scripted answers CutError with 501.
//
// Options.Thinking makes the first tokens of every answer the model's
// thinking, on the formats that stream it apart from the content:
// Ollama's native endpoints ("thinking"), vLLM chat (delta.reasoning)
// and llama.cpp chat (delta.reasoning_content). They count in the
// server's output-token count, as the model generated them: a client
// that counts only content events finds fewer tokens than the server
// reports, and one that times only content starts the answer's clock
// Thinking × ITL late.
//
// Options.EmptyEvery makes every k-th answer token of vLLM's formats an
// event with empty text (content "" or text ""), as vLLM writes a token
// whose text its detokenizer holds back; the held text leaves with the
// next token, and the usage count counts every token. The last token is
// never empty. The other formats answer 501 (llama.cpp writes nothing
// for such a token; TGI and Ollama were not read for it).
//
// Options.LlamaCppErrorLine gives llama.cpp's formats older llama.cpp's
// failure for Cut CutError: an "error: {…}" SSE line (a field no SSE
// parser knows), then "data: [DONE]" on chat.
//
// A handler blocked in Prefill or ITL returns as soon as the client goes
// away or the server closes, so httptest.Server.Close leaves no goroutine
// behind.
//
// # Transport
//
// Options past Fingerprint script what a server does around its answer,
// the same on every format (transport.go), so that a client can be judged
// on more than streams; none is on in the zero value:
//
//   - Plain answers PlainPath (any method) with Plain bytes of
//     text/plain, with a Content-Length, or in PlainChunks flushed pieces
//     ITL apart without one (chunked on HTTP/1.1). Every request's body
//     is read whole and its bytes counted (Stats.BodyBytes), so a large
//     request body can be checked against what the server read.
//     PlainSized sends those pieces with a Content-Length; PlainStatus
//     answers with another status (a 4xx: a refusal whose body is the
//     same known pattern).
//   - HeadDelay stalls every answer before its first byte; a stream's
//     Prefill counts after it.
//   - Informational writes that 1xx status (e.g. 103) at once, before
//     HeadDelay and the answer's head.
//   - Pause is added before the token (or plain piece) after the first
//     PauseAfter: a pause mid-stream.
//   - CloseAfter closes each connection after that many answers:
//     "Connection: close" on HTTP/1.1, GOAWAY on HTTP/2 (net/http's
//     server does both for that header).
//   - Two more cuts: CutReset resets the connection (SO_LINGER 0; on
//     HTTP/2 the stream is reset, as CutClose does there), CutHang stops
//     writing and holds the stream until the client leaves.
//
// A request whose client leaves during HeadDelay is counted with status
// 0: read, never answered.
package scripted
