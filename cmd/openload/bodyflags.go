package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/internal/prompt"
	"github.com/openload/openload/result"
)

// bodyOptions are what openload does to the request bodies beyond sending
// them: a JSON body goes as JSON (Content-Type: application/json, as curl
// --json sends it, unless -H set one: vLLM answers 400 and TGI 415
// without it), and --model names the model in every body whose API has
// a model field (prompt.API.HasModel; a JSON body of the user's: its
// "model" member), or asks
// the target's /v1/models for it (--model auto, as GuideLLM does).
type bodyOptions struct {
	model string
	json  bool   // every body is JSON
	extra string // --extra-body: a JSON object merged into the bodies openload makes
	// conversation is set by a scenario whose sessions are a
	// conversation, whose turns are bodies openload makes too
	// (conversation.go), known before validate.
	conversation bool
}

// modelAuto is --model's value that asks the target.
const modelAuto = "auto"

func (b *bodyOptions) flags(fs *pflag.FlagSet) {
	fs.StringVar(&b.extra, "extra-body", "", "merge the `JSON` object into every body openload makes (--prompt-tokens, --dataset, a scenario's conversation), after its own fields, in the order given, as vLLM's --extra-body: sampling parameters, min_tokens, chat_template_kwargs; openload's own fields (model, the prompt, the max tokens, stream, stream_options, ignore_eos) are refused")
	fs.StringVar(&b.model, "model", "", "name the model `NAME` in every body whose API has a model field (generated prompts: not TGI's native /generate; your JSON bodies: their \"model\" member); 'auto': the first id of the target's GET /v1/models, asked once before the run")
}

// jsonBody reports whether the body typed or read is JSON: a --body that
// parses as JSON, or a --body-file named .json, .jsonl or .ndjson.
func jsonBody(body, bodyFile string) bool {
	if bodyFile != "" {
		switch strings.ToLower(filepath.Ext(bodyFile)) {
		case ".json", ".jsonl", ".ndjson":
			return true
		}
		return false
	}
	return body != "" && json.Valid([]byte(body))
}

// validate completes r's request from the body flags, once r's bodies
// are read (o.request, streamflags.go): the Content-Type of a JSON body
// and, with a model given, every body's "model".
func (b *bodyOptions) validate(fs *pflag.FlagSet, o *loadOptions) error {
	r := &o.run
	b.json = b.json || jsonBody(o.body, o.bodyFile)
	switch {
	case b.extra == "" && !fs.Changed("extra-body"):
	case b.extra == "":
		return errors.New("--extra-body needs a JSON object, e.g. '{\"temperature\":0}'")
	case o.body != "" || o.bodyFile != "":
		return errors.New("--extra-body merges into the bodies openload makes: --body and --body-file are your whole body, put the fields in it")
	case !o.prompts.made() && !b.conversation:
		return errors.New("--extra-body applies to the bodies openload makes: give --prompt-tokens, --dataset or a scenario's conversation")
	}
	if fs.Changed("model") && b.model == "" {
		return errors.New("--model needs a NAME, or 'auto' to ask the target's /v1/models")
	}
	if b.model != "" && !b.json {
		return errors.New("--model sets the \"model\" member of a JSON body: give one (--body '{…}', a .json or .jsonl --body-file, or generated prompts)")
	}
	if b.json && r.Header.Get("Content-Type") == "" {
		r.Header.Set("Content-Type", "application/json")
		note(r).ContentType = "application/json"
	}
	if b.model != "" && b.model != modelAuto {
		if !o.prompts.made() { // made, they carry it (promptOptions.spec)
			if err := setModel(r, prompt.SetModel, b.model); err != nil {
				return err
			}
		}
		o.noteModel(r, b.model, "")
	}
	return nil
}

// ownFieldWhy says, by field, why --extra-body may not set one of the
// grammar's own fields (prompt.API.Clash).
var ownFieldWhy = map[string]string{
	"model":                     "--model sets it",
	"messages":                  "the prompt is the one openload makes",
	"prompt":                    "the prompt is the one openload makes",
	"inputs":                    "the prompt is the one openload makes",
	"max_tokens":                "--output-tokens sets the max tokens",
	"max_completion_tokens":     "--output-tokens sets the max tokens (as max_tokens)",
	"n_predict":                 "--output-tokens sets the max tokens",
	"options":                   "its members are merged into the options openload writes, so it must be a JSON object",
	"parameters":                "its members are merged into the parameters openload writes, so it must be a JSON object",
	"options.num_predict":       "--output-tokens sets the max tokens",
	"parameters.max_new_tokens": "--output-tokens sets the max tokens",
	"parameters.details":        "openload asks for the details, to count the tokens",
	"stream":                    "openload streams every body it makes, to time the tokens",
	"stream_options":            "openload asks for the usage, to count the tokens",
	"ignore_eos":                "--ignore-eos sets it",
}

// extraBody reads --extra-body for bodies of api: empty without it.
func (b *bodyOptions) extraBody(api prompt.API) (prompt.Extra, error) {
	if b.extra == "" {
		return prompt.Extra{}, nil
	}
	e, err := prompt.ParseExtra([]byte(b.extra))
	if err != nil {
		return e, fmt.Errorf("--extra-body: %v", err)
	}
	if k, ok := api.Clash(e); ok {
		if key, _ := api.Nested(); k == key {
			return e, fmt.Errorf("--extra-body: %q must be a JSON object: its members go into the %s openload writes", k, k)
		}
		return e, fmt.Errorf("--extra-body: %q is openload's own field: %s", k, ownFieldWhy[k])
	}
	return e, nil
}

// note returns r's request note, made when first needed.
func note(r *loadtest.Options) *result.Request {
	if r.Request == nil {
		r.Request = &result.Request{}
	}
	return r.Request
}

// prepare is a run's loadtest.Setup.Prepare: it completes r's request
// once the target is known (a built-in stub starts after validate) and
// before anything is sent: generated prompts go to the built-in stub's
// API, are remade by the target's tokenizer (--tokenizer server), and
// --model auto asks the target.
func (o *loadOptions) prepare(ctx context.Context, _ string, r *loadtest.Options) error {
	if o.prompts.made() && r.BuiltinStub != "" {
		r.URL.Path = "/v1/chat/completions"
		if o.prompts.grammar == prompt.Completions {
			r.URL.Path = "/v1/completions"
		}
	}
	if err := o.prompts.sizeByServer(ctx, r); err != nil { // --tokenizer, tokenizerflags.go
		return err
	}
	if o.bodies.model != modelAuto || o.prompts.made() && !o.prompts.grammar.HasModel() {
		return nil // none to ask, or no field to name it in
	}
	models := modelsURL(r.URL)
	id, err := firstModel(ctx, models, r.Header, r.ClientTLS())
	if err != nil {
		return fmt.Errorf("--model auto: GET %s: %v", models, err)
	}
	set := prompt.SetModel // the user's JSON
	if o.prompts.made() {
		set = o.prompts.grammar.WithModel // as their grammar has it
	}
	if err := setModel(r, set, id); err != nil {
		return err
	}
	o.noteModel(r, id, models)
	return nil
}

// modelsURL is the OpenAI list of models next to u: /v1/models on its
// host, which vLLM, TGI, llama.cpp's server and Ollama all serve.
func modelsURL(u *url.URL) string {
	m := url.URL{Scheme: u.Scheme, User: u.User, Host: u.Host, Path: "/v1/models"}
	return m.String()
}

// firstModel returns the first id of the list of models at models: the
// OpenAI form {"object":"list","data":[{"id":…},…]}. The request carries
// the run's headers (an API key), not its body.
func firstModel(ctx context.Context, models string, h http.Header, tlsCfg *tls.Config) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, models, nil)
	if err != nil {
		return "", err
	}
	for k, v := range h {
		if !strings.EqualFold(k, "Content-Type") {
			req.Header[k] = v
		}
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsCfg, Proxy: nil}}
	defer client.CloseIdleConnections()
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("status %s", resp.Status)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		return "", fmt.Errorf("not an OpenAI list of models: %v", err)
	}
	if len(list.Data) == 0 || list.Data[0].ID == "" {
		return "", errors.New("the list holds no model")
	}
	return list.Data[0].ID, nil
}

// setModel names the model in every body of r with set.
func setModel(r *loadtest.Options, set func([]byte, string) ([]byte, error), name string) error {
	for i, body := range r.Bodies {
		b, err := set(body, name)
		if err != nil {
			return fmt.Errorf("--model: body %d: %v", i+1, err)
		}
		r.Bodies[i] = b
	}
	if len(r.Bodies) > 0 {
		r.Body = r.Bodies[0]
		return nil
	}
	b, err := set(r.Body, name)
	if err != nil {
		return fmt.Errorf("--model: the body: %v", err)
	}
	r.Body = b
	return nil
}

// noteModel notes the model the bodies carry (from: the list it was read
// from, or "" when given): none when openload made them in a grammar
// without a model field (prompt.API.HasModel: TGI's).
func (o *loadOptions) noteModel(r *loadtest.Options, name, from string) {
	if o.prompts.made() && !o.prompts.grammar.HasModel() {
		return
	}
	n := note(r)
	n.Model, n.ModelFrom = name, from
}
