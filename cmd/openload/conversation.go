package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/internal/prompt"
	"github.com/openload/openload/internal/session"
)

// conversationYAML is a scenario's conversation: each session a chat
// whose turns send the conversation so far, the model's own answers in it
// (internal/session, conversation.go). Synthetic turns (turns,
// user-tokens, output-tokens, system-tokens, shared-system), or the human
// turns of a ShareGPT file (dataset). The scenario's url is the endpoint;
// its API is told by the path unless api names it.
//
//	conversation:
//	  turns: 4
//	  user-tokens: 100
//	  output-tokens: 200
//	  think: 2s
type conversationYAML struct {
	Turns        int    `yaml:"turns"`
	UserTokens   string `yaml:"user-tokens"`
	OutputTokens string `yaml:"output-tokens"`
	SystemTokens int    `yaml:"system-tokens"`
	SharedSystem bool   `yaml:"shared-system"`
	Dataset      string `yaml:"dataset"`
	API          string `yaml:"api"`
	Model        string `yaml:"model"`
	Think        string `yaml:"think"`
	IgnoreEOS    bool   `yaml:"ignore-eos"`
}

// readConversation reads a scenario's conversation map.
func readConversation(v any) (*conversationYAML, error) {
	b, err := yaml.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var c conversationYAML
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("conversation: %s", strings.ReplaceAll(oneLine(err), "in type main.conversationYAML", "(a conversation has turns, user-tokens, output-tokens, system-tokens, shared-system, dataset, api, model, think, ignore-eos)"))
	}
	return &c, nil
}

// conversationRun makes r a run of c's conversations, sent to r's URL;
// b holds the scenario's --model, if any, and --extra-body.
func conversationRun(r *loadtest.Options, c *conversationYAML, b *bodyOptions, onFailure string, seed uint64) error {
	model := b.model
	if r.URL == nil {
		return fmt.Errorf("conversation: no url: give the scenario the model server's endpoint (…/v1/chat/completions)")
	}
	spec := prompt.ConversationSpec{Turns: c.Turns, System: c.SystemTokens, SharedSystem: c.SharedSystem, Seed: seed, IgnoreEOS: c.IgnoreEOS, Model: c.Model}
	if spec.Model == "" {
		spec.Model = model
	}
	if spec.Model == modelAuto {
		return fmt.Errorf("conversation: model auto: name the model (a conversation's bodies are made before the run)")
	}
	var err error
	if c.API != "" {
		spec.API, err = prompt.ParseAPI(c.API)
	} else {
		spec.API, err = prompt.APIOf(r.URL.Path)
	}
	if err != nil {
		return fmt.Errorf("conversation: %v", err)
	}
	if spec.Extra, err = b.extraBody(spec.API); err != nil {
		return err
	}
	if c.UserTokens != "" {
		if spec.User, err = prompt.ParseLength(c.UserTokens); err != nil {
			return fmt.Errorf("conversation: user-tokens: %v", err)
		}
	}
	if c.OutputTokens != "" {
		if spec.Output, err = prompt.ParseLength(c.OutputTokens); err != nil {
			return fmt.Errorf("conversation: output-tokens: %v", err)
		}
	}
	cs := session.ConversationSpec{Prompt: spec, URL: r.URL, Header: r.Header, Think: c.Think, OnFailure: onFailure}
	if c.Dataset != "" {
		if c.Turns != 0 || c.UserTokens != "" || c.SystemTokens != 0 || c.SharedSystem {
			return fmt.Errorf("conversation: dataset %q gives the turns: no turns, user-tokens, system-tokens or shared-system with it", c.Dataset)
		}
		f, err := os.Open(c.Dataset)
		if err != nil {
			return fmt.Errorf("conversation: dataset: %v", unwrapPath(err))
		}
		defer f.Close()
		if cs.Convs, _, err = prompt.ReadConversations(f, c.Dataset, spec); err != nil {
			return fmt.Errorf("conversation: %v", err)
		}
		cs.File = c.Dataset
	}
	cv, err := session.CompileConversations(cs)
	if err != nil {
		return err
	}
	r.Sessions = cv
	r.Stream = true
	return nil
}
