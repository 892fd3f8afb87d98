package stub

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// tokenConfig is a stub with a quick token model and room for many
// sequences, changed by change.
func tokenConfig(change func(*Config)) Config {
	return testConfig(func(c *Config) {
		c.Policy = PolicyNone
		c.BatchSlots = 64
		c.MaxQueueWait = time.Minute // sequences wait for a slot as long as it takes
		c.Prefill, c.ITL = time.Millisecond, time.Millisecond
		if change != nil {
			change(c)
		}
	})
}

// streamed is one answer read event by event.
type streamed struct {
	status int
	header http.Header
	sent   time.Time
	events []sseEvent // the data: events, [DONE] included
	body   []byte     // the whole body of an answer that is not a stream
	err    error      // reading the body
	proto  int        // the response's HTTP major version
}

type sseEvent struct {
	data string
	at   time.Time
}

// post sends body to path and reads the answer: event by event when it
// is a stream, whole otherwise. A stream line that is neither "data: …"
// nor blank fails the test (post may run in a goroutine of the test).
func post(ctx context.Context, t *testing.T, c *http.Client, url, body string) streamed {
	out := streamed{sent: time.Now()}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		out.err = err
		return out
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		out.err = err
		return out
	}
	defer resp.Body.Close()
	out.status, out.header, out.proto = resp.StatusCode, resp.Header, resp.ProtoMajor
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		out.body, out.err = io.ReadAll(resp.Body)
		return out
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
		case strings.HasPrefix(line, "data: "):
			out.events = append(out.events, sseEvent{strings.TrimPrefix(line, "data: "), time.Now()})
		default:
			t.Errorf("stream line %q is neither data: nor blank", line)
		}
	}
	out.err = sc.Err()
	return out
}

// chunk is an answer object as a client decodes it.
type chunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta *struct {
			Role    *string `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		Message *struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
		Text         *string `json:"text"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *oaUsage `json:"usage"`
}

func decodeChunk(t *testing.T, data string) chunk {
	t.Helper()
	var c chunk
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		t.Fatalf("event %q: %v", data, err)
	}
	return c
}

// A streamed chat answer: the role event, one event per token, the finish
// event, the usage event (choices empty) and [DONE], as OpenAI streams it.
func TestChatStream(t *testing.T) {
	s := startServer(t, tokenConfig(nil), nil)
	c := newClient(t)
	// 20 bytes of prompt: 5 tokens.
	body := `{"model":"my-model","messages":[{"role":"system","content":"be brief"},` +
		`{"role":"user","content":[{"type":"text","text":"hello there!"}]}],` +
		`"max_tokens":6,"stream":true,"stream_options":{"include_usage":true},"temperature":0.2}`
	r := post(context.Background(), t, c, s.URL+pathChat, body)
	if r.err != nil || r.status != http.StatusOK {
		t.Fatalf("status %d, err %v", r.status, r.err)
	}
	if ct := r.header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type = %q", ct)
	}
	if src := r.header.Get("X-Stub-Source"); src != "model" {
		t.Errorf("X-Stub-Source = %q, want model", src)
	}
	const n = 6
	if len(r.events) != 1+n+1+1+1 {
		t.Fatalf("%d events, want role + %d tokens + finish + usage + [DONE]: %v", len(r.events), n, r.events)
	}
	if last := r.events[len(r.events)-1].data; last != "[DONE]" {
		t.Errorf("last event %q, want [DONE]", last)
	}
	var text strings.Builder
	var id string
	for i, ev := range r.events[:len(r.events)-1] {
		ch := decodeChunk(t, ev.data)
		if ch.Object != "chat.completion.chunk" || ch.Model != "my-model" || ch.Created == 0 {
			t.Errorf("event %d: object %q model %q created %d", i, ch.Object, ch.Model, ch.Created)
		}
		if i == 0 {
			id = ch.ID
		} else if ch.ID != id {
			t.Errorf("event %d: id %q, the first was %q", i, ch.ID, id)
		}
		switch {
		case i == 0:
			d := ch.Choices[0].Delta
			if d == nil || d.Role == nil || *d.Role != "assistant" || d.Content == nil || *d.Content != "" {
				t.Errorf("first event %s: want the assistant role with empty content", ev.data)
			}
		case i <= n:
			if len(ch.Choices) != 1 || ch.Choices[0].Delta == nil || ch.Choices[0].Delta.Content == nil ||
				*ch.Choices[0].Delta.Content == "" || ch.Choices[0].FinishReason != nil || ch.Usage != nil {
				t.Errorf("token event %d: %s", i, ev.data)
				continue
			}
			text.WriteString(*ch.Choices[0].Delta.Content)
		case i == n+1:
			if len(ch.Choices) != 1 || ch.Choices[0].FinishReason == nil || *ch.Choices[0].FinishReason != "length" {
				t.Errorf("finish event: %s, want finish_reason length (max_tokens reached)", ev.data)
			}
		case i == n+2:
			want := oaUsage{PromptTokens: 5, CompletionTokens: n, TotalTokens: 5 + n}
			if len(ch.Choices) != 0 || ch.Usage == nil || *ch.Usage != want {
				t.Errorf("usage event: %s, want choices [] and usage %+v", ev.data, want)
			}
		}
	}
	if got := strings.Fields(text.String()); len(got) != n {
		t.Errorf("streamed text %q has %d words, want %d", text.String(), len(got), n)
	}
	st := waitFor(t, s, "the sequence to leave", func(st Stats) bool { return st.InModel == 0 })
	checkAccounting(t, st)
	if tk := st.Tokens; tk.Streams != 1 || tk.StreamsCompleted != 1 || tk.OutputTokens != n || tk.ActiveSequences != 0 || tk.Lateness.Count != 1 {
		t.Errorf("token stats %+v, want 1 stream completed (its lateness recorded), %d tokens, none active", tk, n)
	}
}

// Completions stream text chunks; without include_usage no usage event;
// unstreamed answers carry usage; prompts count in every documented form.
func TestCompletions(t *testing.T) {
	s := startServer(t, tokenConfig(func(c *Config) { c.OutputTokens = 3 }), nil)
	c := newClient(t)
	r := post(context.Background(), t, c, s.URL+pathCompletions, `{"model":"m","prompt":"abcdefgh","stream":true}`)
	if r.err != nil || r.status != http.StatusOK {
		t.Fatalf("status %d, err %v", r.status, r.err)
	}
	if len(r.events) != 3+1+1 {
		t.Fatalf("%d events, want 3 tokens + finish + [DONE]", len(r.events))
	}
	for i, ev := range r.events[:4] {
		ch := decodeChunk(t, ev.data)
		if ch.Object != "text_completion" || ch.Usage != nil || len(ch.Choices) != 1 || ch.Choices[0].Text == nil {
			t.Errorf("event %d: %s", i, ev.data)
			continue
		}
		fin := ch.Choices[0].FinishReason
		if i < 3 && (fin != nil || *ch.Choices[0].Text == "") {
			t.Errorf("token event %d: %s", i, ev.data)
		}
		if i == 3 && (fin == nil || *fin != "stop") {
			t.Errorf("finish event %s: want finish_reason stop (no max_tokens: --output-tokens)", ev.data)
		}
	}

	for _, tc := range []struct {
		prompt string
		tokens int
	}{
		{`"abcd"`, 1}, {`"abcde"`, 2}, {`""`, 0}, {`"héé"`, 3}, // cl100k_base: h, é, é
		{`["abcd","abcde"]`, 3}, {`[1,2,3]`, 3}, {`[[1,2],[3]]`, 3},
	} {
		r := post(context.Background(), t, c, s.URL+pathCompletions, `{"model":"m","max_tokens":2,"prompt":`+tc.prompt+`}`)
		if r.err != nil || r.status != http.StatusOK {
			t.Fatalf("prompt %s: status %d, err %v", tc.prompt, r.status, r.err)
		}
		ch := decodeChunk(t, string(r.body))
		want := oaUsage{PromptTokens: tc.tokens, CompletionTokens: 2, TotalTokens: tc.tokens + 2}
		if ch.Object != "text_completion" || ch.Usage == nil || *ch.Usage != want || len(ch.Choices) != 1 ||
			ch.Choices[0].Text == nil || len(strings.Fields(*ch.Choices[0].Text)) != 2 {
			t.Errorf("prompt %s: %s, want 2 words and usage %+v", tc.prompt, r.body, want)
		}
	}

	r = post(context.Background(), t, c, s.URL+pathChat, `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":4}`)
	ch := decodeChunk(t, string(r.body))
	if r.status != http.StatusOK || ch.Object != "chat.completion" || len(ch.Choices) != 1 || ch.Choices[0].Message == nil ||
		ch.Choices[0].Message.Role != "assistant" || len(strings.Fields(ch.Choices[0].Message.Content)) != 4 ||
		ch.Usage == nil || ch.Usage.CompletionTokens != 4 || ch.Usage.PromptTokens != 1 {
		t.Errorf("unstreamed chat: %d %s", r.status, r.body)
	}

	resp, err := c.Get(s.URL + pathModels)
	if err != nil {
		t.Fatal(err)
	}
	var models struct {
		Object string `json:"object"`
		Data   []struct {
			ID     string `json:"id"`
			Object string `json:"object"`
		} `json:"data"`
	}
	err = json.NewDecoder(resp.Body).Decode(&models)
	resp.Body.Close()
	if err != nil || models.Object != "list" || len(models.Data) != 1 || models.Data[0].ID != stubModelID || models.Data[0].Object != "model" {
		t.Errorf("GET /v1/models: %+v, %v", models, err)
	}
	checkAccounting(t, s.Stats())
}

// Bad requests get 400 (or 405) with an OpenAI error body, and are not
// model requests.
func TestOpenAIBadRequests(t *testing.T) {
	s := startServer(t, tokenConfig(nil), nil)
	c := newClient(t)
	msgs := `"messages":[{"role":"user","content":"hi"}]`
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		param                    string // want error.param; "" for null
	}{
		{"malformed JSON", "POST", pathChat, `{"model":"m",`, 400, ""},
		{"not an object", "POST", pathChat, `[1]`, 400, ""},
		{"empty body", "POST", pathCompletions, ``, 400, ""},
		{"model missing", "POST", pathChat, `{` + msgs + `}`, 400, "model"},
		{"model empty", "POST", pathCompletions, `{"model":"","prompt":"x"}`, 400, "model"},
		{"model not a string", "POST", pathChat, `{"model":3,` + msgs + `}`, 400, ""},
		{"max_tokens zero", "POST", pathChat, `{"model":"m","max_tokens":0,` + msgs + `}`, 400, "max_tokens"},
		{"max_tokens negative", "POST", pathCompletions, `{"model":"m","max_tokens":-5,"prompt":"x"}`, 400, "max_tokens"},
		{"max_tokens too many", "POST", pathCompletions, `{"model":"m","max_tokens":65537,"prompt":"x"}`, 400, "max_tokens"},
		{"max_tokens fraction", "POST", pathCompletions, `{"model":"m","max_tokens":1.5,"prompt":"x"}`, 400, ""},
		{"max_completion_tokens zero", "POST", pathChat, `{"model":"m","max_completion_tokens":0,` + msgs + `}`, 400, "max_completion_tokens"},
		{"stream_options without stream", "POST", pathChat, `{"model":"m","stream_options":{"include_usage":true},` + msgs + `}`, 400, "stream_options"},
		{"n of 2", "POST", pathChat, `{"model":"m","n":2,` + msgs + `}`, 400, "n"},
		{"messages missing", "POST", pathChat, `{"model":"m"}`, 400, "messages"},
		{"content a number", "POST", pathChat, `{"model":"m","messages":[{"role":"user","content":7}]}`, 400, "messages[0].content"},
		{"prompt missing", "POST", pathCompletions, `{"model":"m"}`, 400, "prompt"},
		{"prompt an object", "POST", pathCompletions, `{"model":"m","prompt":{"a":1}}`, 400, "prompt"},
		{"GET chat", "GET", pathChat, ``, 405, ""},
		{"POST models", "POST", pathModels, `{}`, 405, ""},
	} {
		req, _ := http.NewRequest(tc.method, s.URL+tc.path, strings.NewReader(tc.body))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var e struct {
			Error *struct {
				Message string  `json:"message"`
				Type    string  `json:"type"`
				Param   *string `json:"param"`
			} `json:"error"`
		}
		err = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		switch {
		case resp.StatusCode != tc.status:
			t.Errorf("%s: status %d, want %d", tc.name, resp.StatusCode, tc.status)
		case tc.status == http.StatusMethodNotAllowed && resp.Header.Get("Allow") == "":
			t.Errorf("%s: 405 without Allow", tc.name)
		case err != nil || e.Error == nil || e.Error.Message == "" || e.Error.Type != "invalid_request_error":
			t.Errorf("%s: error body %+v (%v)", tc.name, e.Error, err)
		case tc.param == "" && e.Error.Param != nil, tc.param != "" && (e.Error.Param == nil || *e.Error.Param != tc.param):
			t.Errorf("%s: param %v, want %q", tc.name, e.Error.Param, tc.param)
		}
	}
	if st := s.Stats(); st.Total != 0 {
		t.Errorf("Stats.Total = %d after bad requests only, want 0", st.Total)
	}
}

// The token model's formulas.
func TestTokenModel(t *testing.T) {
	c := Config{Prefill: 20 * time.Millisecond, PrefillPerToken: 100 * time.Microsecond,
		ITL: 10 * time.Millisecond, ITLPerSeq: 500 * time.Microsecond}
	if got := c.prefill(300); got != 50*time.Millisecond {
		t.Errorf("prefill(300) = %v, want 20ms + 300×0.1ms = 50ms", got)
	}
	for active, want := range map[int64]time.Duration{0: 10 * time.Millisecond, 1: 10 * time.Millisecond,
		2: 10500 * time.Microsecond, 9: 14 * time.Millisecond} {
		if got := c.itl(active); got != want {
			t.Errorf("itl(%d active) = %v, want %v", active, got, want)
		}
	}
	// cl100k_base counts, as tiktoken gives them: " x" repeated is one
	// token each, "x" repeated merges into tokens of 8.
	for text, want := range map[string]int{"": 0, "a": 1, "abcd": 1, "abcde": 2, "The quick brown fox": 4,
		strings.Repeat(" x", 700): 700, strings.Repeat("x", 4000): 500} {
		if got := promptTokens(text); got != want {
			t.Errorf("promptTokens(%d bytes) = %d, want %d", len(text), got, want)
		}
	}
}

// The pacer spaces tokens by the gap of the sequences active at each
// token: never sooner (timers do not fire early).
func TestPacerFollowsActiveSequences(t *testing.T) {
	s, err := NewUnstartedServer(tokenConfig(func(c *Config) {
		c.ITL, c.ITLPerSeq = 2*time.Millisecond, 4*time.Millisecond
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.tok.active.Store(3) // this sequence and two others: 2 + 2×4 = 10ms a token
	start := time.Now()
	p := s.newPacer(context.Background(), start)
	defer p.stop()
	for range 5 {
		if !p.nextToken() {
			t.Fatal("nextToken returned false")
		}
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("5 tokens at 3 active sequences took %v, want >= 5 × 10ms", d)
	}
}

// A stream takes at least the prefill of its prompt and the gaps between
// its tokens.
func TestStreamPace(t *testing.T) {
	s := startServer(t, tokenConfig(func(c *Config) {
		c.Prefill, c.PrefillPerToken, c.ITL = 20*time.Millisecond, time.Millisecond, 15*time.Millisecond
	}), nil)
	c := newClient(t)
	// A prompt of 10 tokens (" x" is one), so the first token comes >=
	// 30ms after the request, and the 5th >= 4 × 15ms after the first.
	body := `{"model":"m","prompt":"` + strings.Repeat(" x", 10) + `","max_tokens":5,"stream":true}`
	r := post(context.Background(), t, c, s.URL+pathCompletions, body)
	if r.err != nil || len(r.events) != 5+2 {
		t.Fatalf("err %v, %d events", r.err, len(r.events))
	}
	if ttft := r.events[0].at.Sub(r.sent); ttft < 30*time.Millisecond {
		t.Errorf("first token after %v, want >= 30ms", ttft)
	}
	if d := r.events[4].at.Sub(r.sent); d < 30*time.Millisecond+4*15*time.Millisecond {
		t.Errorf("5th token after %v, want >= 90ms", d)
	}
	st := s.Stats()
	if st.TotalTime.Count != 1 {
		t.Fatalf("total_ms count %d", st.TotalTime.Count)
	}
}

// --batch-slots bounds the sequences in the model; the rest wait in the
// queue (and --workers no longer applies).
func TestBatchSlotsQueue(t *testing.T) {
	s := startServer(t, tokenConfig(func(c *Config) {
		c.Workers, c.BatchSlots = 1, 2
		// The two waiting are seen while the first two are in prefill:
		// a second, for a slow machine.
		c.Prefill, c.OutputTokens = time.Second, 2
	}), nil)
	c := newClient(t)
	const n = 4
	done := make(chan streamed, n)
	for range n {
		go func() {
			done <- post(context.Background(), t, c, s.URL+pathChat, `{"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]}`)
		}()
	}
	waitFor(t, s, "2 sequences in the model and 2 waiting", func(st Stats) bool {
		return st.InModel == 2 && st.QueueLen == 2 && st.Tokens.ActiveSequences == 2
	})
	for range n {
		if r := <-done; r.err != nil || r.status != 200 || len(r.events) != 1+2+1+1 {
			t.Errorf("status %d err %v, %d events", r.status, r.err, len(r.events))
		}
	}
	st := waitFor(t, s, "the model to empty", func(st Stats) bool { return st.InModel == 0 })
	if st.MaxInModel != 2 {
		t.Errorf("max_in_model = %d, want 2 (--batch-slots)", st.MaxInModel)
	}
	if st.Tokens.StreamsCompleted != n || st.Sources.Model != n {
		t.Errorf("completed %d streams, %d model answers; want %d", st.Tokens.StreamsCompleted, st.Sources.Model, n)
	}
	checkAccounting(t, st)
}

// A stall freezes the model: tokens due inside it wait for its end.
func TestStreamStall(t *testing.T) {
	s := startServer(t, tokenConfig(func(c *Config) {
		// Tokens due from 0 to 380ms; the stall covers 100..400ms.
		c.Prefill, c.ITL = 0, 20*time.Millisecond
		c.StallAt, c.StallFor = 100*time.Millisecond, 300*time.Millisecond
	}), nil)
	c := newClient(t)
	r := post(context.Background(), t, c, s.URL+pathCompletions, `{"model":"m","prompt":"x","max_tokens":20,"stream":true}`)
	if r.err != nil || len(r.events) != 20+2 {
		t.Fatalf("err %v, %d events", r.err, len(r.events))
	}
	// The stall clock starts at the request's arrival, after r.sent.
	if d := r.events[19].at.Sub(r.sent); d < 400*time.Millisecond {
		t.Errorf("last token after %v, want >= the stall's end at 400ms", d)
	}
	st := s.Stats()
	if st.StalledRequests != 1 || st.Stalls != 1 {
		t.Errorf("stalled_requests %d, stalls %d; want 1 and 1", st.StalledRequests, st.Stalls)
	}
	checkAccounting(t, st)
}

// The deadline gate checks at the head of the answer (the first token): a
// prefill past the deadline drops the answer, a stream that starts in time
// runs to its end.
func TestStreamDeadline(t *testing.T) {
	s := startServer(t, tokenConfig(func(c *Config) {
		c.Deadline = 500 * time.Millisecond
		c.PrefillPerToken = time.Millisecond
		c.ITL = 100 * time.Millisecond
	}), nil)
	c := newClient(t)
	long := `{"model":"m","stream":true,"max_tokens":2,"prompt":"` + strings.Repeat(" x", 700) + `"}` // 700 tokens: 700ms prefill
	r := post(context.Background(), t, c, s.URL+pathCompletions, long)
	if r.err != nil || r.status != http.StatusServiceUnavailable || len(r.body) != 0 || r.header.Get("X-Stub-Drop") != "late" {
		t.Errorf("late prefill: status %d, X-Stub-Drop %q, body %q, err %v", r.status, r.header.Get("X-Stub-Drop"), r.body, r.err)
	}
	// 10 tokens × 100ms outlast the deadline, but the head left in time.
	r = post(context.Background(), t, c, s.URL+pathCompletions, `{"model":"m","stream":true,"max_tokens":10,"prompt":"x"}`)
	if r.err != nil || r.status != http.StatusOK || len(r.events) != 10+2 {
		t.Errorf("stream in time: status %d, %d events, err %v", r.status, len(r.events), r.err)
	}
	st := waitFor(t, s, "the model to empty", func(st Stats) bool { return st.InModel == 0 })
	if st.Deadline.Dropped.Late != 1 || st.Deadline.Sent != 1 {
		t.Errorf("dropped late %d, sent %d; want 1 and 1", st.Deadline.Dropped.Late, st.Deadline.Sent)
	}
	checkAccounting(t, st)
}

// The limiter answers 429 with an OpenAI error; the gate's fallback is a
// short answer in the request's own form, marked fallback.
func TestStreamLimiterAndFallback(t *testing.T) {
	chat := `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`
	t.Run("limiter", func(t *testing.T) {
		// One request a window, and a clock that stays in the first window
		// however slow the machine.
		s := startServer(t, tokenConfig(func(c *Config) { c.LimitRPS, c.LimitWindow = 1, time.Second }), func(s *Server) {
			now := time.Now()
			s.limitClock = func() time.Time { return now }
		})
		c := newClient(t)
		if r := post(context.Background(), t, c, s.URL+pathChat, chat); r.status != 200 {
			t.Fatalf("first request: %d", r.status)
		}
		r := post(context.Background(), t, c, s.URL+pathChat, chat)
		var e struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" ||
			json.Unmarshal(r.body, &e) != nil || e.Error.Code != "rate_limit_exceeded" {
			t.Errorf("second request: %d, Retry-After %q, body %s", r.status, r.header.Get("Retry-After"), r.body)
		}
		checkAccounting(t, s.Stats())
	})
	t.Run("fallback", func(t *testing.T) {
		s := startServer(t, tokenConfig(func(c *Config) {
			c.Policy, c.QueueCap, c.BatchSlots = PolicyBounded, 1, 1
			c.Prefill = 10 * time.Second // released by the test's cancel
		}), nil)
		c := newClient(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		for i := range 2 {
			go post(ctx, t, c, s.URL+pathChat, chat)
			waitFor(t, s, "the model and the queue to fill", func(st Stats) bool { return st.InModel == 1 && st.QueueLen == i })
		}
		r := post(context.Background(), t, c, s.URL+pathChat, chat)
		if r.status != 200 || r.header.Get("X-Stub-Source") != "fallback" || r.header.Get("X-Stub-Reason") != "queue-full" {
			t.Fatalf("third request: %d %s/%s", r.status, r.header.Get("X-Stub-Source"), r.header.Get("X-Stub-Reason"))
		}
		if len(r.events) != 1+3+1+1+1 || r.events[len(r.events)-1].data != "[DONE]" {
			t.Fatalf("fallback stream: %d events", len(r.events))
		}
		if u := decodeChunk(t, r.events[5].data).Usage; u == nil || u.CompletionTokens != 3 {
			t.Errorf("fallback usage %+v, want 3 completion tokens", u)
		}
		cancel()
		st := waitFor(t, s, "the cancelled requests to leave", func(st Stats) bool { return st.InModel == 0 && st.QueueLen == 0 && st.InFlight == 0 })
		if st.Canceled != 2 || st.Tokens.ActiveSequences != 0 {
			t.Errorf("canceled %d, active %d; want 2 and 0", st.Canceled, st.Tokens.ActiveSequences)
		}
		checkAccounting(t, st)
	})
}

// A client that goes away mid-stream frees its slot at once; Close cuts
// the streams still running and returns.
func TestStreamCut(t *testing.T) {
	s := startServer(t, tokenConfig(func(c *Config) { c.ITL, c.OutputTokens = 50*time.Millisecond, 1000 }), nil)
	c := newClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan streamed, 1)
	go func() {
		got <- post(ctx, t, c, s.URL+pathCompletions, `{"model":"m","prompt":"x","stream":true}`)
	}()
	waitFor(t, s, "the stream to run", func(st Stats) bool { return st.Tokens.OutputTokens >= 2 })
	cancel()
	if r := <-got; r.err == nil {
		t.Errorf("a cancelled stream read to its end: %d events", len(r.events))
	}
	st := waitFor(t, s, "the slot to be freed", func(st Stats) bool { return st.InModel == 0 && st.Tokens.ActiveSequences == 0 })
	if st.Tokens.Streams != 1 || st.Tokens.StreamsCompleted != 0 {
		t.Errorf("streams %d, completed %d; want 1 and 0", st.Tokens.Streams, st.Tokens.StreamsCompleted)
	}
	checkAccounting(t, st)

	go func() {
		got <- post(context.Background(), t, c, s.URL+pathCompletions, `{"model":"m","prompt":"x","stream":true}`)
	}()
	waitFor(t, s, "a second stream to run", func(st Stats) bool { return st.Tokens.Streams == 2 })
	s.Close()
	if r := <-got; r.err == nil {
		t.Errorf("a stream cut by Close read to its end: %d events", len(r.events))
	}
}

// Streams work over HTTP/2 (h2c) too: one event per token, flushed.
func TestStreamH2C(t *testing.T) {
	s := startServer(t, tokenConfig(func(c *Config) { c.H2C = true }), nil)
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	t.Cleanup(tr.CloseIdleConnections)
	c := &http.Client{Transport: tr, Timeout: 15 * time.Second}
	r := post(context.Background(), t, c, s.URL+pathChat,
		`{"model":"m","stream":true,"stream_options":{"include_usage":true},"max_tokens":4,"messages":[{"role":"user","content":"x"}]}`)
	if r.err != nil || r.status != 200 || len(r.events) != 1+4+1+1+1 {
		t.Fatalf("status %d, err %v, %d events", r.status, r.err, len(r.events))
	}
	if r.proto != 2 {
		t.Errorf("answered over HTTP/%d, want HTTP/2", r.proto)
	}
	if u := decodeChunk(t, r.events[6].data).Usage; u == nil || u.CompletionTokens != 4 {
		t.Errorf("usage %+v, want 4 completion tokens", u)
	}
	st := waitFor(t, s, "the model to empty", func(st Stats) bool { return st.InModel == 0 })
	if st.Tokens.StreamsCompleted != 1 {
		t.Errorf("streams completed %d, want 1", st.Tokens.StreamsCompleted)
	}
}
