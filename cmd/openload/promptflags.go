package main

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/openload/openload/internal/engine"
	"github.com/openload/openload/internal/loadtest"
	"github.com/openload/openload/internal/prompt"
	"github.com/openload/openload/internal/splitmix"
	"github.com/openload/openload/internal/sweep"
)

// promptOptions make the bodies of a model-server load from a description
// in tokens, as GuideLLM's --data prompt_tokens=256,output_tokens=128 and
// vLLM's benchmark --random-input-len do: generated prompts of a known
// length (--prompt-tokens), or a ShareGPT file's conversations
// (--dataset), in the grammar of the target's API (--api, else the URL's
// path). internal/prompt makes them; this file only reads the flags.
type promptOptions struct {
	promptTokens string
	outputTokens string
	api          string
	dataset      string
	turns        string
	ignoreEOS    bool
	count        int
	prefixTokens int         // --prefix-tokens: shared prefixes' length, 0 for none
	prefixCount  int         // --prefix-count: their number
	order        string      // --dataset-order: file or shuffle
	tokenizer    string      // --tokenizer: cl100k_base, server or a /tokenize URL (tokenizerflags.go)
	grammar      prompt.API  // of the bodies made (validate)
	generated    prompt.Spec // of the bodies generated (validate), remade by --tokenizer
}

// maxPrompts bounds the distinct bodies made by default, for one run or
// all the runs of a sweep or --repeats (runsPlan): beyond it, requests
// take them again in turn (about 15 KB a 1024-token body).
const maxPrompts = 10_000

func (p *promptOptions) flags(fs *pflag.FlagSet) {
	fs.StringVar(&p.promptTokens, "prompt-tokens", "", "generate bodies whose prompts hold `N[,spread]` tokens (cl100k_base, or --tokenizer's), lengths uniform in N·(1±spread) as vLLM's --random-range-ratio (with --prefix-tokens: the unique suffix after the shared prefix); implies --stream")
	fs.StringVar(&p.outputTokens, "output-tokens", "", "with --prompt-tokens or --dataset: each body asks for `M[,spread]` output tokens (max_tokens or the API's name for it)")
	fs.StringVar(&p.api, "api", "", "`NAME` of the body grammar of generated prompts: "+strings.Join(prompt.APINames(), ", ")+" (default: from the URL's path)")
	fs.StringVar(&p.dataset, "dataset", "", "prompts from a ShareGPT-format JSON `file`: a list of {\"conversations\": [{\"from\": \"human\", \"value\": …}, {\"from\": \"gpt\", …}]}; an answer's length is the max tokens asked")
	fs.StringVar(&p.turns, "dataset-turns", "first", "with --dataset, which turns: `first` (vLLM's reading: each entry's first turn) or every (each human turn an answer follows, with the conversation before it)")
	fs.StringVar(&p.order, "dataset-order", "file", "with --dataset, the order requests take the entries in: `file`, or shuffle: shuffled by --seed as vLLM's ShareGPT reading, each pass over them a new permutation, so none repeats before all are sent")
	fs.BoolVar(&p.ignoreEOS, "ignore-eos", true, "with --output-tokens: ask the server to ignore the end of sequence so answers reach M (ignore_eos; vLLM and llama.cpp have it); =false: let the model stop")
	fs.IntVar(&p.prefixTokens, "prefix-tokens", 0, "with --prompt-tokens: begin every prompt with one of --prefix-count shared prefixes of `P` tokens, drawn by the seed and the request's index, as vLLM's prefix_repetition (prefix_len) and GuideLLM's prefix_tokens, to load a prefix cache")
	fs.IntVar(&p.prefixCount, "prefix-count", 1, "with --prefix-tokens: `K` distinct shared prefixes, each prompt's drawn uniformly (vLLM's num_prefixes, GuideLLM's prefix_count)")
	p.tokenizerFlag(fs) // tokenizerflags.go
	fs.IntVar(&p.count, "prompt-count", 0, "`N` distinct bodies to make (default: one per request of the run, or of every run of a sweep or --repeats, each run taking them on from the last, at most 10,000; requests beyond take them again in turn)")
}

// made reports whether openload makes the bodies.
func (p *promptOptions) made() bool { return p.promptTokens != "" || p.dataset != "" }

// validate makes the bodies, when asked, into o.run: the bodies, what
// each holds (engine.Config.BodyTokens) and the note the result keeps.
// It runs after o.request (the typed body) and before the stream and
// body flags' validate, which see the bodies made.
func (p *promptOptions) validate(fs *pflag.FlagSet, o *loadOptions) error {
	r := &o.run
	for _, name := range []string{"output-tokens", "api", "dataset-turns", "ignore-eos", "prompt-count"} {
		if fs.Changed(name) && !p.made() {
			return fmt.Errorf("--%s applies to generated prompts: give --prompt-tokens or --dataset", name)
		}
	}
	if err := p.validatePrefix(fs); err != nil {
		return err
	}
	if err := p.validateTokenizer(fs); err != nil {
		return err
	}
	if fs.Changed("dataset-order") && p.dataset == "" {
		return errors.New("--dataset-order applies to --dataset: generated prompts are in no file")
	}
	switch {
	case fs.Changed("prompt-tokens") && p.promptTokens == "":
		return errors.New("--prompt-tokens needs N or N,spread, e.g. 1024 or 1024,0.1")
	case !p.made():
		return nil
	case p.promptTokens != "" && p.dataset != "":
		return errors.New("--prompt-tokens and --dataset are exclusive: the dataset gives the prompts")
	case o.body != "" || o.bodyFile != "":
		return errors.New("--prompt-tokens and --dataset make the bodies: drop --body and --body-file")
	case p.count < 0 || fs.Changed("prompt-count") && p.count == 0:
		return fmt.Errorf("--prompt-count must be at least 1, got %d", p.count)
	}
	spec, err := p.spec(fs, o)
	if err != nil {
		return err
	}
	p.grammar = spec.API
	if err := p.checkTokenizerAPI(spec.API); err != nil {
		return err
	}
	var bodies []prompt.Body
	var what string
	if p.dataset != "" {
		bodies, what, err = p.read(spec, bodiesFor(o))
	} else {
		bodies, err = prompt.Generate(spec)
		p.generated = spec
		what = fmt.Sprintf("%d generated %s prompts of %s tokens", len(bodies), spec.API, lengthText(spec.Prompt))
		if spec.PrefixTokens > 0 {
			what = fmt.Sprintf("%d generated %s prompts: %d shared prefixes of %d tokens + suffixes of %s tokens", len(bodies), spec.API, spec.Prefixes, spec.PrefixTokens, lengthText(spec.Prompt))
		}
	}
	if err != nil {
		return err
	}
	r.Bodies, r.BodyTokens = make([][]byte, len(bodies)), make([]engine.BodyTokens, len(bodies))
	for i, b := range bodies {
		r.Bodies[i], r.BodyTokens[i] = b.JSON, engine.BodyTokens{Prompt: b.PromptTokens, Asked: b.MaxTokens}
	}
	r.Body, r.Stream = r.Bodies[0], true
	if r.Method == "GET" && !fs.Changed("method") {
		r.Method = "POST"
	}
	if spec.Output != (prompt.Length{}) {
		what += ", max tokens " + lengthText(spec.Output)
	}
	if spec.IgnoreEOS {
		what += ", ignore_eos"
	}
	if k := spec.Extra.Keys(); len(k) > 0 {
		what += ", extra fields " + strings.Join(k, ", ")
	}
	what += repeatsNote(o, len(bodies))
	what += cl100kNote // a server's tokenizer rewrites it (sizeByServer)
	if p.dataset == "" {
		what += fmt.Sprintf(", seed %d", spec.Seed)
		if !fs.Changed("seed") {
			what += " (drawn for this run: --seed N makes the same prompts again)"
		}
	}
	note(r).Prompts = what
	o.bodies.json = true
	return nil
}

// validatePrefix checks --prefix-tokens and --prefix-count: shared
// prefixes go before generated prompts only (a dataset's are its own).
func (p *promptOptions) validatePrefix(fs *pflag.FlagSet) error {
	switch {
	case !fs.Changed("prefix-tokens") && fs.Changed("prefix-count"):
		return errors.New("--prefix-count needs --prefix-tokens: the length of the shared prefixes")
	case !fs.Changed("prefix-tokens"):
		return nil
	case p.promptTokens == "":
		return errors.New("--prefix-tokens applies to --prompt-tokens: the shared prefix goes before each generated prompt")
	case p.prefixTokens < 1:
		return fmt.Errorf("--prefix-tokens must be at least 1, got %d", p.prefixTokens)
	case p.prefixCount < 1:
		return fmt.Errorf("--prefix-count must be at least 1, got %d", p.prefixCount)
	}
	return nil
}

// promptSeed is the seed generated prompts are drawn with. --seed given
// makes the same prompts again, on purpose; without it every run draws
// its own, so that a second run, a repeat or another sweep does not
// re-send the last one's prompts to a server whose prefix cache would
// serve them (vLLM draws fresh random offsets per run likewise). Shards
// of one run (a shared --start-at) derive theirs from that instant, so
// they agree on every prompt. The seed is in the result's note.
func promptSeed(fs *pflag.FlagSet, r *loadtest.Options) uint64 {
	switch {
	case fs.Changed("seed"):
		return r.Schedule.Seed
	case !r.StartAt.IsZero():
		return splitmix.Mix(uint64(r.StartAt.UnixNano()))
	}
	return rand.Uint64()
}

// spec is what the flags ask internal/prompt for.
func (p *promptOptions) spec(fs *pflag.FlagSet, o *loadOptions) (prompt.Spec, error) {
	r := &o.run
	s := prompt.Spec{Seed: promptSeed(fs, r), Count: p.count}
	if p.prefixTokens > 0 {
		s.PrefixTokens, s.Prefixes = p.prefixTokens, p.prefixCount
	}
	if o.bodies.model != modelAuto { // auto: asked of the target once it is known (loadOptions.prepare)
		s.Model = o.bodies.model // the grammar decides whether its bodies carry it
	}
	var err error
	switch {
	case p.api != "":
		if s.API, err = prompt.ParseAPI(p.api); err != nil {
			return s, fmt.Errorf("--api: %v", err)
		}
		if fs.NArg() == 0 && s.API != prompt.Chat && s.API != prompt.Completions {
			return s, fmt.Errorf("--api %s: the built-in stub serves chat and completions; give the URL of a server that speaks %s", p.api, p.api)
		}
	case fs.NArg() == 1:
		u, err := parseURL(fs.Arg(0))
		if err != nil {
			return s, err
		}
		if s.API, err = prompt.APIOf(u.Path); err != nil {
			return s, fmt.Errorf("--api is needed: the URL's path %q names no API openload knows (%s)", u.Path, strings.Join(prompt.APINames(), ", "))
		}
	default:
		s.API = prompt.Chat // the built-in stub's (resolve sets the path)
	}
	if s.Extra, err = o.bodies.extraBody(s.API); err != nil {
		return s, err
	}
	if p.promptTokens != "" {
		if s.Prompt, err = prompt.ParseLength(p.promptTokens); err != nil {
			return s, fmt.Errorf("--prompt-tokens: %v", err)
		}
	}
	if p.outputTokens != "" {
		if s.Output, err = prompt.ParseLength(p.outputTokens); err != nil {
			return s, fmt.Errorf("--output-tokens: %v", err)
		}
	}
	// ignore_eos where the API has it and an output length is asked (a
	// dataset's answers stop where the model stops, as in vLLM's
	// benchmark); an explicit --ignore-eos elsewhere is refused by the
	// spec.
	s.IgnoreEOS = p.ignoreEOS && (fs.Changed("ignore-eos") || s.API.CanIgnoreEOS() && s.Output != prompt.Length{})
	if s.Count == 0 && p.dataset == "" {
		s.Count = maxPrompts
		if n := bodiesFor(o); n > 0 && n < maxPrompts {
			s.Count = int(math.Ceil(n))
		}
	}
	return s, nil
}

// runsPlan is what the bodies made serve besides one run: a sweep's
// points (o.plan), or --repeats' runs, which take the bodies on from run
// to run (internal/sweep, bodies.go); nil for one run.
func runsPlan(o *loadOptions) *sweep.Plan {
	if o.plan == nil && o.stages.repeats > 1 {
		p := sweep.PlanRepeats(o.run.Schedule, o.stages.repeats)
		return &p
	}
	return o.plan
}

// bodiesFor is how many bodies the run, or all the runs it is one of,
// may take: as many are made, up to maxPrompts (0: a closed loop's count,
// not known ahead, takes maxPrompts too).
func bodiesFor(o *loadOptions) float64 {
	switch plan := runsPlan(o); {
	case plan == nil:
		return o.run.Schedule.Expected()
	case !plan.Known():
		return maxPrompts
	default:
		return plan.Bodies
	}
}

// repeatsNote says, for the prompts' note, when the requests will send
// the n bodies made more than once: a prefix cache would serve the
// repeats.
func repeatsNote(o *loadOptions, n int) string {
	plan, made := runsPlan(o), float64(n)
	switch {
	case plan == nil:
		if reqs := o.run.Schedule.Expected(); reqs > made {
			return fmt.Sprintf("; %d bodies for about %.0f requests, so each is sent about %.1f times", n, reqs, reqs/made)
		}
	case !plan.Known():
		return fmt.Sprintf("; %d bodies for all the runs of a sweep whose rates are found as it runs: past %d requests they are sent again", n, n)
	case plan.Requests <= made:
	case plan.AtMost:
		return fmt.Sprintf("; %d bodies for a search of %s, up to about %.0f requests: past %d they are sent again", n, plan.Runs, plan.Requests, n)
	default:
		return fmt.Sprintf("; %d bodies for about %.0f requests over %s, so each is sent about %.1f times", n, plan.Requests, plan.Runs, plan.Requests/made)
	}
	return ""
}

// read reads --dataset's bodies, for a run of about requests requests
// (0: not known).
func (p *promptOptions) read(spec prompt.Spec, requests float64) ([]prompt.Body, string, error) {
	if p.order != "file" && p.order != "shuffle" {
		return nil, "", fmt.Errorf("--dataset-order %q: want file or shuffle", p.order)
	}
	var turns prompt.Turns
	switch p.turns {
	case "first":
		turns = prompt.FirstTurn
	case "every":
		turns = prompt.EveryTurn
	default:
		return nil, "", fmt.Errorf("--dataset-turns %q: want first or every", p.turns)
	}
	f, err := os.Open(p.dataset)
	if err != nil {
		return nil, "", fmt.Errorf("--dataset %q: %v", p.dataset, unwrapPath(err))
	}
	defer f.Close()
	if p.order == "shuffle" {
		spec.Count = 0 // --prompt-count: the first of the shuffled bodies, not of the file
	}
	bodies, skipped, err := prompt.ReadShareGPT(f, spec, turns)
	if err != nil {
		return nil, "", fmt.Errorf("--dataset %q: %v", p.dataset, err)
	}
	which := map[string]string{"first": "each entry's first turn", "every": "every answered turn"}[p.turns]
	distinct := len(bodies)
	if p.order == "shuffle" {
		bodies = shuffled(bodies, p.count, spec.Seed, requests)
		distinct = min(distinct, len(bodies))
		if p.count > 0 {
			distinct = min(distinct, p.count)
		}
		which += ", shuffled by the seed"
	}
	what := fmt.Sprintf("%d %s prompts from %s (%s", distinct, spec.API, p.dataset, which)
	if skipped > 0 {
		what += fmt.Sprintf("; %d skipped by vLLM's length rules", skipped)
	}
	return bodies, what + ")", nil
}

// shuffled is --dataset-order shuffle: the bodies of the seed's first
// permutation, its first count (vLLM's --num-prompts: the first of the
// shuffled entries), then, for a run of more requests, new permutations
// of those in turn (prompt.ShuffleOrder), as many bodies as requests up
// to maxPrompts; requests beyond take them again in turn, as every
// body list is taken.
func shuffled(all []prompt.Body, count int, seed uint64, requests float64) []prompt.Body {
	pick := func(from []prompt.Body, n int) []prompt.Body {
		out := make([]prompt.Body, n)
		for j, k := range prompt.ShuffleOrder(len(from), seed, n) {
			out[j] = from[k]
		}
		return out
	}
	chosen := all
	if count > 0 && count < len(all) {
		chosen = pick(all, count)
	}
	n := len(chosen)
	if requests > float64(n) {
		n = max(n, int(math.Min(math.Ceil(requests), maxPrompts)))
	}
	return pick(chosen, n)
}

// lengthText says a length for the report: "1024", or "921–1127 (1024 ± 10 %)".
func lengthText(l prompt.Length) string {
	lo, hi := l.Bounds()
	if l.Spread == 0 || lo == hi {
		return fmt.Sprint(l.N)
	}
	return fmt.Sprintf("%d–%d (%d ± %g %%)", lo, hi, l.N, 100*l.Spread)
}
